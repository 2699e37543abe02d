//! Context compile: whole blocks by priority under a budget, with provenance (CONCEPTS.md "context").
//!
//! Being written: see the issue for the rulers.
