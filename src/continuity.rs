//! Continuity: the handoff record written at Stop/PreCompact and injected at SessionStart.
