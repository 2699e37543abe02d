#!/bin/sh
# lane-kit/territory-guard: PreToolUse hook for Edit|Write|NotebookEdit (Codex:
# apply_patch), exit_policy block.
# Reads the host's hook JSON on stdin and hands it to `git hpp lane guard --host HOST`, which
# denies an edit outside the territory of the session's lane, inside another live exclusive
# lane's territory, or in another worktree of the repository, and allows silently outside a lane.
# Claude Code reads the denial as hookSpecificOutput.permissionDecision "deny" (exit 0); Codex as
# exit 2 with the reason on stderr. Without git-hpp installed it allows (exit 0).
# Usage: territory-guard.sh [claude-code|codex]
host="${1:-claude-code}"
if ! git hpp --version >/dev/null 2>&1; then
  cat >/dev/null
  exit 0
fi
exec git hpp lane guard --host "$host"
