//! Store support for continuity (see the module of the same concept).
