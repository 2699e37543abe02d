#!/usr/bin/env bash
# lane-kit/git-guard: PreToolUse hook on Bash (exit_policy block).
# While another lane is alive, a git call that sweeps the whole worktree or shared history
# (add -A, commit -a, reset --hard, clean -f, stash, checkout .) is asked about (git config
# hpp.lane.gitGuard warn, the default; Codex cannot ask, so it refuses) or refused
# (hpp.lane.gitGuard block). The JSON is read and written by `git hpp lane guard`, which also
# runs the territory guard for edits.
# Fails closed: a host reads any exit but 2 as "allow", so when git-hpp cannot run (not on PATH,
# or it ends with an internal error, exit 3, or a crash) the call is blocked (exit 2, one line on
# stderr). git-hpp's answers and refusals pass through unchanged.
# Usage: git-guard.sh [claude-code|codex]
exec 3>&1
err=$(git hpp lane guard --host "${1:-${HPP_HOST:-claude-code}}" 2>&1 1>&3 3>&-)
code=$?
exec 3>&-
if [ "$code" = 0 ] || [ "$code" = 2 ] || { [ "$code" = 1 ] && git hpp --version >/dev/null 2>&1; }; then
  [ -z "$err" ] || printf '%s\n' "$err" >&2
  exit "$code"
fi
nl='
'
why=${err%%"$nl"*}
printf 'lane git guard: git-hpp could not run (exit %s%s); the call is blocked until `git hpp --version` works\n' "$code" "${why:+: $why}" >&2
exit 2
