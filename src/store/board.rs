//! Store support for board (see the module of the same concept).
