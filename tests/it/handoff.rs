//! Integration tests for `handoff` (being built).
