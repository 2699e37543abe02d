//! SSH signatures (being written).
