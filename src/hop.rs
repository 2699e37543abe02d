//! The Hop agent protocol (seeds/HOP-PROTOCOL.md): states, checks, proposals, landing.
