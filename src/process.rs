//! The bounded process runner (being written).
