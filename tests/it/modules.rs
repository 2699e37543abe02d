//! Integration tests for `modules` (being built).
