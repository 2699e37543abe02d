#!/usr/bin/env bash
# continuity-kit/turn-checkpoint: Stop hook (exit_policy observe).
# Keeps the workspace as the agent left it after each turn at
# refs/hpp/checkpoints/<session>/turn/<n> (the snapshot tree and checkpoint.json), without
# touching the index or HEAD; a turn that changed nothing writes none. The JSON is read by
# `git hpp hook turn-checkpoint`. Prints nothing and always exits 0.
# Fails open, under a deadline: it guards nothing, so when git-hpp cannot run, or does not end
# within 20 s (`hpp-run.sh`; the installed hook declares a `timeout` of 30), it says so on
# stderr, exits 0, and the agent goes on (the guarding hooks are the ones that fail closed).
# Usage: turn-checkpoint.sh [claude-code|codex]
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
bash "$here/hpp-run.sh" note "turn checkpoint" 20 hook turn-checkpoint --host "${1:-${HPP_HOST:-claude-code}}"
exit 0
