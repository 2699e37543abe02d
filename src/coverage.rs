//! Spec coverage: criteria cited by tests, joined to JUnit reports (CONCEPTS.md "spec coverage").
//!
//! Being written: see the issue for the rulers.
