//! Routing: a risk floor and upward-only fallback across tiers (CONCEPTS.md "routing").
//!
//! Being written: see the issue for the rulers.
