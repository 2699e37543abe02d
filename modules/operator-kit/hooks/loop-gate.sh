#!/usr/bin/env bash
# operator-kit/loop-gate: Stop hook (exit_policy block).
# Blocks the agent from finishing while the current harness loop (the branch's loop, as
# `git hpp status` reads it) has started but is not verified, and tells it the next step.
# Allows the stop when no loop was started, when the loop is verified, outside a repository,
# and always when the host says a Stop hook already continued this turn (stop_hook_active),
# so it can never keep the agent running forever.
# Usage: loop-gate.sh [claude-code|codex]   (both hosts read {"decision":"block","reason":...})
set -u
input=$(cat)
if printf '%s' "$input" | grep -Eq '"stop_hook_active"[[:space:]]*:[[:space:]]*true'; then
  exit 0
fi

json_escape() {
  printf '%s' "$1" | tr '\t\r\n' '   ' | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g'
}
block() {
  printf '{"decision":"block","reason":"%s"}\n' "$(json_escape "$1")"
  exit 0
}
field() {
  printf '%s\n' "$status" | sed -n "s/^  \"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}\$/\1/p" | head -n 1
}

errors=$(mktemp)
trap 'rm -f "$errors"' EXIT
if ! status=$(git hpp status --json 2>"$errors"); then
  why=$(head -n 1 "$errors")
  case "$why" in
    *"not a git repository"* | *"HEAD is detached"*) exit 0 ;;
  esac
  block "The loop gate could not read the loop: ${why}. Fix it before finishing (run: git hpp status)."
fi

state=$(field state)
count=$(field event_count)
loop=$(field loop)
next=$(field next_step)
if [ "${count:-0}" = "0" ] || [ "$state" = "verified" ]; then
  exit 0
fi
block "Loop ${loop} is ${state}, not verified. Next step: ${next}. Do it and record it with git hpp (git hpp status --loop ${loop} shows where the loop stands) before finishing, or say plainly that the work is not done."
