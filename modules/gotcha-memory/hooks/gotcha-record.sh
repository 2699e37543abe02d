#!/usr/bin/env bash
# gotcha-memory/gotcha-record: PostToolUse and PostToolUseFailure hook (exit_policy observe).
# Records a failed tool call in refs/hpp/gotchas/failures, classified by error family and
# redacted by shape ([REDACTED:<kind>:<len>]) before it is stored; when the same task key and
# family fail 3 times within 24 h (git config hpp.gotcha.minCount / hpp.gotcha.windowHours) it is
# promoted to a gotcha and added to the session as additionalContext. Always exits 0.
# Fails open, under a deadline: it guards nothing, so when git-hpp cannot run, or does not end
# within 20 s (`hpp-run.sh`; the installed hook declares a `timeout` of 30), it says so on
# stderr, exits 0, and the agent goes on (the guarding hooks are the ones that fail closed).
# Usage: gotcha-record.sh [claude-code|codex]
# The input's hook_event_name says which of the two events it is; git hpp reads it.
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
bash "$here/hpp-run.sh" note "gotcha record" 20 gotcha hook --host "${1:-${HPP_HOST:-claude-code}}" --event PostToolUse
exit 0
