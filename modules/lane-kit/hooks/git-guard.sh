#!/usr/bin/env bash
# lane-kit/git-guard: PreToolUse hook on Bash (exit_policy block).
# While another lane is alive, a git call that sweeps the whole worktree or shared history
# (add -A, commit -a, reset --hard, clean -f, stash, checkout .) is asked about (git config
# hpp.lane.gitGuard warn, the default; Codex cannot ask, so it refuses) or refused
# (hpp.lane.gitGuard block). The JSON is read and written by `git hpp lane guard`, which also
# runs the territory guard for edits.
# Usage: git-guard.sh [claude-code|codex]
exec git hpp lane guard --host "${1:-${HPP_HOST:-claude-code}}"
