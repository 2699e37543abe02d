//! Integration tests for `checker` (being built).
