//! Maps (CONCEPTS.md "lane", "monitor", "context budget"): lane, agent, monitor and context projections.
