//! Integration tests for `gotcha` (being built).
