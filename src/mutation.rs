//! Criterion sensitivity: mutants that a criterion command must kill (CONCEPTS.md "criterion sensitivity").
//!
//! Being written: see the issue for the rulers.
