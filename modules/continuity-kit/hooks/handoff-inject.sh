#!/usr/bin/env bash
# continuity-kit/handoff-inject: SessionStart hook (exit_policy observe).
# Adds the lane's latest handoff ($HPP_LANE, else solo; else the newest of any lane) to the
# session as additionalContext, saying whether HEAD moved since it was written. Always exits 0.
# Fails open: it guards nothing, so when git-hpp cannot run it still exits 0 and the agent
# goes on (the guarding hooks are the ones that fail closed).
# Usage: handoff-inject.sh [claude-code|codex]
git hpp handoff hook --host "${1:-${HPP_HOST:-claude-code}}" --event SessionStart
exit 0
