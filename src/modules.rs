//! Modules (CONCEPTS.md "module"): module directories, CHECKSUMS.txt, install plans.
