//! Integration tests for `atlas` (being built).
