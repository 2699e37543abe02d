//! Integration tests for `install` (being built).
