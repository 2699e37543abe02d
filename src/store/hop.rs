//! Store support for hop (see the module of the same concept).
