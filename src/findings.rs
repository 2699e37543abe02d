//! Review findings: the hpp.findings/v1 shape and its derived verdict (CONCEPTS.md "findings").
//!
//! Being written: see the issue for the rulers.
