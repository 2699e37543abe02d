//! Evals: pass@k and pass^k over a suite, and the packaged controls (CONCEPTS.md "pass@k").
//!
//! Being written: see the issue for the rulers.
