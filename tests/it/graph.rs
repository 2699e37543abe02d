//! Integration tests for `graph` (being built).
