#!/usr/bin/env bash
# continuity-kit/handoff-write: Stop and PreCompact hook (exit_policy observe).
# Writes a measured handoff (git head, branch, dirty paths, loop state, the loop's next step and
# the command to verify first) to refs/hpp/handoffs/<lane> ($HPP_LANE, else solo), unless the
# latest handoff already says the same. Prints nothing and always exits 0.
# Usage: handoff-write.sh [claude-code|codex]
input=$(cat)
event=$(printf '%s' "$input" | sed -n 's/.*"hook_event_name"[[:space:]]*:[[:space:]]*"\([A-Za-z]*\)".*/\1/p' | head -n 1)
case "$event" in
  PreCompact) ;;
  *) event=Stop ;;
esac
printf '%s' "$input" | git hpp handoff hook --host "${1:-${HPP_HOST:-claude-code}}" --event "$event"
exit 0
