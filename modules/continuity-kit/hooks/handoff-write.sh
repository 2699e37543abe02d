#!/usr/bin/env bash
# continuity-kit/handoff-write: Stop and PreCompact hook (exit_policy observe).
# Writes a measured handoff (git head, branch, dirty paths, loop state, the loop's next step and
# the command to verify first) to refs/hpp/handoffs/<lane> ($HPP_LANE, else solo), unless the
# latest handoff already says the same. Prints nothing and always exits 0.
# Fails open, under a deadline: it guards nothing, so when git-hpp cannot run, or does not end
# within 20 s (`hpp-run.sh`; the installed hook declares a `timeout` of 30), it says so on
# stderr, exits 0, and the agent goes on (the guarding hooks are the ones that fail closed).
# Usage: handoff-write.sh [claude-code|codex]
# The event comes from the input's hook_event_name (PreCompact, else Stop), read by git hpp.
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
bash "$here/hpp-run.sh" note "handoff write" 20 handoff hook --host "${1:-${HPP_HOST:-claude-code}}"
exit 0
