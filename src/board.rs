//! The lane board (CONCEPTS.md "lane"): items, states, transitions, competitions; pure rules.
