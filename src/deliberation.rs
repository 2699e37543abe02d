//! House Session (CONCEPTS.md "House Session"): panels, turns, stop rules, the sealed record.
