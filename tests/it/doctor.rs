//! Integration tests for `doctor` (being built).
