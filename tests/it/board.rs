//! Integration tests for `board` (being built).
