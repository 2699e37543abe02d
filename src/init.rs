//! `init`: the six stages (detect, prereqs, profile, configure, wire-suggest, smoke) and readiness.
