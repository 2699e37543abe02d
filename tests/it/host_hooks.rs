//! Integration tests for `host_hooks` (being built).
