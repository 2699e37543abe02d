//! WorkGraph: compile a spec of work units into waves (CONCEPTS.md "WorkGraph", "wave").
//!
//! Being written: see the issue for the rulers.
