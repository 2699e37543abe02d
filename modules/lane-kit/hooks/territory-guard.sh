#!/usr/bin/env bash
# lane-kit/territory-guard: PreToolUse hook for Edit|Write|NotebookEdit (Codex:
# apply_patch), exit_policy block.
# Reads the host's hook JSON on stdin and hands it to `git hpp lane guard --host HOST`, which
# denies an edit outside the territory of the session's lane, inside another live exclusive
# lane's territory, or in another worktree of the repository; a session in no lane that edits
# inside a live exclusive lane's territory is asked (git config hpp.lane.outsideEdits: ask, the
# default; deny; allow), and any other edit outside a lane is allowed silently.
# Claude Code reads the denial as hookSpecificOutput.permissionDecision "deny" (exit 0); Codex as
# exit 2 with the reason on stderr.
# Fails closed, under a deadline: `hpp-run.sh` gives git-hpp 20 s (the installed hook declares
# a `timeout` of 30); a host reads any exit but 2 as "allow", so a hang past the deadline, a
# crash, git-hpp missing, any exit but 0 and 2, and exit 0 with output that is not a JSON object
# all block (exit 2, one line on stderr). git-hpp's answers and refusals pass through unchanged.
# Usage: territory-guard.sh [claude-code|codex]
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
bash "$here/hpp-run.sh" guard "lane territory guard" 20 lane guard --host "${1:-claude-code}"
code=$?
[ "$code" = 0 ] || [ "$code" = 2 ] && exit "$code"
printf 'lane territory guard: %s/hpp-run.sh could not run (exit %s); the call is blocked\n' "$here" "$code" >&2
exit 2
