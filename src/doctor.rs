//! The doctor: manifest validation, hook census, module checksums and store checks.
