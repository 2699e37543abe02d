//! Integration tests for `maps` (being built).
