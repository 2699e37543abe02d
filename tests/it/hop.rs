//! Integration tests for `hop` (being built).
