//! SSH signature tests (being written).
