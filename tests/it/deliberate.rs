//! Integration tests for `deliberate` (being built).
