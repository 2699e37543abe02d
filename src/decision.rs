//! Typed decisions: hpp.decision/v1 records and the decide eval ruler (CONCEPTS.md "typed decision").
//!
//! Being written: see the issue for the rulers.
