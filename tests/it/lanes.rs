//! Integration tests for `lanes` (being built).
