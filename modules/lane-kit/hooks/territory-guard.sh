#!/bin/sh
# lane-kit/territory-guard: PreToolUse hook for Edit|Write|NotebookEdit (Codex:
# apply_patch), exit_policy block.
# Reads the host's hook JSON on stdin and hands it to `git hpp lane guard --host HOST`, which
# denies an edit outside the territory of the session's lane, inside another live exclusive
# lane's territory, or in another worktree of the repository; a session in no lane that edits
# inside a live exclusive lane's territory is asked (git config hpp.lane.outsideEdits: ask, the
# default; deny; allow), and any other edit outside a lane is allowed silently.
# Claude Code reads the denial as hookSpecificOutput.permissionDecision "deny" (exit 0); Codex as
# exit 2 with the reason on stderr.
# Fails closed: a host reads any exit but 2 as "allow", so when git-hpp cannot run (not on PATH,
# or it ends with an internal error, exit 3, or a crash) the edit is blocked (exit 2, one line on
# stderr). git-hpp's answers and refusals pass through unchanged.
# Usage: territory-guard.sh [claude-code|codex]
exec 3>&1
err=$(git hpp lane guard --host "${1:-claude-code}" 2>&1 1>&3 3>&-)
code=$?
exec 3>&-
if [ "$code" = 0 ] || [ "$code" = 2 ] || { [ "$code" = 1 ] && git hpp --version >/dev/null 2>&1; }; then
  [ -z "$err" ] || printf '%s\n' "$err" >&2
  exit "$code"
fi
nl='
'
why=${err%%"$nl"*}
printf 'lane territory guard: git-hpp could not run (exit %s%s); the edit is blocked until `git hpp --version` works\n' "$code" "${why:+: $why}" >&2
exit 2
