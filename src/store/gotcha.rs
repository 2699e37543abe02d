//! Store support for gotcha (see the module of the same concept).
