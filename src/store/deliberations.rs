//! Store support for deliberations (see the module of the same concept).
