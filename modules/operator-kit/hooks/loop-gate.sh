#!/usr/bin/env bash
# operator-kit/loop-gate: Stop hook (exit_policy block).
# Blocks the agent from finishing while the current harness loop (the branch's loop, as
# `git hpp status` reads it) has started but is not verified, and tells it the next step.
# Allows the stop when no loop was started, when the loop is verified, outside a repository,
# and always when the host says a Stop hook already continued this turn (stop_hook_active),
# and after 3 blocks of the same session in a row, so it can never keep the agent running
# forever. The JSON is read and written by `git hpp hook loop-gate`.
# Fails closed: when git-hpp cannot run (not on PATH, or it ends with an internal error, exit 3,
# or a crash) the stop is blocked (exit 2, one line on stderr), unless the payload says
# stop_hook_active, which lets it go with a warning: with no git-hpp there is no count of blocks,
# and a broken install must not keep a session running forever. That flag is the one thing this
# script reads from the JSON itself, and only when git-hpp cannot.
# Usage: loop-gate.sh [claude-code|codex]   (both hosts read {"decision":"block","reason":...})
payload=$(cat)
exec 3>&1
err=$(printf '%s\n' "$payload" | git hpp hook loop-gate --host "${1:-${HPP_HOST:-claude-code}}" 2>&1 1>&3 3>&-)
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
    printf 'loop gate: git-hpp could not run (exit %s%s); the stop goes unchecked, since a Stop hook already continued this turn\n' "$code" "${why:+: $why}" >&2
    exit 0 ;;
esac
printf 'loop gate: git-hpp could not run (exit %s%s); the stop is blocked until `git hpp --version` works\n' "$code" "${why:+: $why}" >&2
exit 2
