#!/usr/bin/env bash
# continuity-kit/handoff-inject: SessionStart hook (exit_policy observe).
# Adds the lane's latest handoff ($HPP_LANE, else solo; else the newest of any lane) to the
# session as additionalContext, saying whether HEAD moved since it was written. Always exits 0.
# Fails open, under a deadline: it guards nothing, so when git-hpp cannot run, or does not end
# within 20 s (`hpp-run.sh`; the installed hook declares a `timeout` of 30), it says so on
# stderr, exits 0, and the agent goes on (the guarding hooks are the ones that fail closed).
# Usage: handoff-inject.sh [claude-code|codex]
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
bash "$here/hpp-run.sh" note "handoff inject" 20 handoff hook --host "${1:-${HPP_HOST:-claude-code}}" --event SessionStart
exit 0
