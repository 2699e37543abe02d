#!/usr/bin/env bash
# gotcha-memory/gotcha-preamble: SessionStart hook (exit_policy observe).
# Adds the top 5 gotchas (family priority, then occurrences, then recency) to the session as
# additionalContext, before the next run repeats them. Prints nothing when there is none.
# Fails open: it guards nothing, so when git-hpp cannot run it still exits 0 and the agent
# goes on (the guarding hooks are the ones that fail closed).
# Usage: gotcha-preamble.sh [claude-code|codex]
git hpp gotcha hook --host "${1:-${HPP_HOST:-claude-code}}" --event SessionStart
exit 0
