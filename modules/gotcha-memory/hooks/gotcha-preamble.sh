#!/usr/bin/env bash
# gotcha-memory/gotcha-preamble: SessionStart hook (exit_policy observe).
# Adds the top 5 gotchas (family priority, then occurrences, then recency) to the session as
# additionalContext, before the next run repeats them. Prints nothing when there is none.
# Usage: gotcha-preamble.sh [claude-code|codex]
git hpp gotcha hook --host "${1:-${HPP_HOST:-claude-code}}" --event SessionStart
exit 0
