#!/usr/bin/env bash
# operator-kit/evidence-gate: Stop hook (exit_policy block).
# Runs every criterion command configured in git config hpp.criterion (multi-valued; each value
# is an argv as a JSON array of strings, e.g. ["cargo","test","--quiet"]) through
# `git hpp evidence run`, so each run is recorded as an evidence bundle under refs/hpp/evidence/,
# and blocks the stop while any of them does not pass. With no criterion configured it allows
# the stop and says that nothing is configured. It always ends: it lets the stop go when the
# host says a Stop hook already continued the turn (stop_hook_active), and after 3 blocks of the
# same session in a row on any host (Codex caps nothing). The JSON is read and written by
# `git hpp hook evidence-gate`.
# Fails closed: when git-hpp cannot run (not on PATH, or it ends with an internal error, exit 3,
# or a crash) the stop is blocked (exit 2, one line on stderr), unless the payload says
# stop_hook_active, which lets it go with a warning: with no git-hpp there is no count of blocks,
# and a broken install must not keep a session running forever. That flag is the one thing this
# script reads from the JSON itself, and only when git-hpp cannot.
# Usage: evidence-gate.sh [claude-code|codex]   (both hosts read {"decision":"block","reason":...})
payload=$(cat)
exec 3>&1
err=$(printf '%s\n' "$payload" | git hpp hook evidence-gate --host "${1:-${HPP_HOST:-claude-code}}" 2>&1 1>&3 3>&-)
code=$?
exec 3>&-
if [ "$code" = 0 ] || [ "$code" = 2 ] || { [ "$code" = 1 ] && git hpp --version >/dev/null 2>&1; }; then
  [ -z "$err" ] || printf '%s\n' "$err" >&2
  exit "$code"
fi
nl='
'
why=${err%%"$nl"*}
case $payload in
  *'"stop_hook_active":true'* | *'"stop_hook_active": true'*)
    printf 'evidence gate: git-hpp could not run (exit %s%s); the stop goes unchecked, since a Stop hook already continued this turn\n' "$code" "${why:+: $why}" >&2
    exit 0 ;;
esac
printf 'evidence gate: git-hpp could not run (exit %s%s); the stop is blocked until `git hpp --version` works\n' "$code" "${why:+: $why}" >&2
exit 2
