#!/usr/bin/env bash
# operator-kit/loop-gate: Stop hook (exit_policy block).
# Blocks the agent from finishing while the current harness loop (the branch's loop, as
# `git hpp status` reads it) has started but is not verified, and tells it the next step.
# Allows the stop when no loop was started, when the loop is verified, outside a repository,
# and always when the host says a Stop hook already continued this turn (stop_hook_active),
# and after 3 blocks of the same session in a row, so it can never keep the agent running
# forever. The JSON is read and written by `git hpp hook loop-gate`.
# Fails closed, under a deadline: `hpp-run.sh` gives git-hpp 540 s (the installed hook declares
# a `timeout` of 600); a hang past it, a crash, git-hpp missing, any exit but 0 and 2, or exit 0
# with output that is not a JSON object blocks the stop (exit 2, one line on stderr), unless the
# payload says stop_hook_active, which lets it go with a warning: with no git-hpp there is no
# count of blocks, and a broken install must not keep a session running forever.
# Usage: loop-gate.sh [claude-code|codex]   (both hosts read {"decision":"block","reason":...})
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
payload=$(cat)
printf '%s\n' "$payload" | bash "$here/hpp-run.sh" stop "loop gate" 540 hook loop-gate --host "${1:-${HPP_HOST:-claude-code}}"
code=$?
[ "$code" = 0 ] || [ "$code" = 2 ] && exit "$code"
case $payload in
  *'"stop_hook_active":true'* | *'"stop_hook_active": true'*)
    printf 'loop gate: %s/hpp-run.sh could not run (exit %s); the stop goes unchecked\n' "$here" "$code" >&2
    exit 0 ;;
esac
printf 'loop gate: %s/hpp-run.sh could not run (exit %s); the stop is blocked\n' "$here" "$code" >&2
exit 2
