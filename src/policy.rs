//! Command policy: classify a shell command as ALLOW, MANUAL or BLOCK (CONCEPTS.md "policy").
//!
//! Being written: see the issue for the rulers.
