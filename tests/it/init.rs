//! Integration tests for `init` (being built).
