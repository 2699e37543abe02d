//! Store support for fingerprint (see the module of the same concept).
