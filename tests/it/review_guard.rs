//! Integration tests for `review_guard` (being built).
