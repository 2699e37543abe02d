#!/usr/bin/env bash
# gotcha-memory/gotcha-preamble: SessionStart hook (exit_policy observe).
# Adds the top 5 gotchas (family priority, then occurrences, then recency) to the session as
# additionalContext, before the next run repeats them. Prints nothing when there is none.
# Fails open, under a deadline: it guards nothing, so when git-hpp cannot run, or does not end
# within 20 s (`hpp-run.sh`; the installed hook declares a `timeout` of 30), it says so on
# stderr, exits 0, and the agent goes on (the guarding hooks are the ones that fail closed).
# Usage: gotcha-preamble.sh [claude-code|codex]
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
bash "$here/hpp-run.sh" note "gotcha preamble" 20 gotcha hook --host "${1:-${HPP_HOST:-claude-code}}" --event SessionStart
exit 0
