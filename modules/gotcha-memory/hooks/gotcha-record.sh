#!/usr/bin/env bash
# gotcha-memory/gotcha-record: PostToolUse and PostToolUseFailure hook (exit_policy observe).
# Records a failed tool call in refs/hpp/gotchas/failures, classified by error family and
# redacted by shape ([REDACTED:<kind>:<len>]) before it is stored; when the same task key and
# family fail 3 times within 24 h (git config hpp.gotcha.minCount / hpp.gotcha.windowHours) it is
# promoted to a gotcha and added to the session as additionalContext. Always exits 0.
# Fails open: it guards nothing, so when git-hpp cannot run it still exits 0 and the agent
# goes on (the guarding hooks are the ones that fail closed).
# Usage: gotcha-record.sh [claude-code|codex]
# The input's hook_event_name says which of the two events it is; git hpp reads it.
git hpp gotcha hook --host "${1:-${HPP_HOST:-claude-code}}" --event PostToolUse
exit 0
