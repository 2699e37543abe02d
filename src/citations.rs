//! Citation check: every claim cites context that exists (CONCEPTS.md "citation").
//!
//! Being written: see the issue for the rulers.
