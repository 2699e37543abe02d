//! Store support for lanes (see the module of the same concept).
