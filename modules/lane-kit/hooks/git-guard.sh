#!/usr/bin/env bash
# lane-kit/git-guard: PreToolUse hook on Bash (exit_policy block).
# While another lane is alive, a git call that sweeps the whole worktree or shared history
# (add -A, commit -a, reset --hard, clean -f, stash, checkout .) is asked about (git config
# hpp.lane.gitGuard warn, the default; Codex cannot ask, so it refuses) or refused
# (hpp.lane.gitGuard block). The JSON is read and written by `git hpp lane guard`, which also
# runs the territory guard for edits.
# Fails closed, under a deadline: `hpp-run.sh` gives git-hpp 20 s (the installed hook declares
# a `timeout` of 30); a host reads any exit but 2 as "allow", so a hang past the deadline, a
# crash, git-hpp missing, any exit but 0 and 2, and exit 0 with output that is not a JSON object
# all block (exit 2, one line on stderr). git-hpp's answers and refusals pass through unchanged.
# Usage: git-guard.sh [claude-code|codex]
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
bash "$here/hpp-run.sh" guard "lane git guard" 20 lane guard --host "${1:-${HPP_HOST:-claude-code}}"
code=$?
[ "$code" = 0 ] || [ "$code" = 2 ] && exit "$code"
printf 'lane git guard: %s/hpp-run.sh could not run (exit %s); the call is blocked\n' "$here" "$code" >&2
exit 2
