//! Process runner tests (being written).
