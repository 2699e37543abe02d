#!/usr/bin/env bash
# continuity-kit/turn-checkpoint: Stop hook (exit_policy observe).
# Keeps the workspace as the agent left it after each turn at
# refs/hpp/checkpoints/<session>/turn/<n> (the snapshot tree and checkpoint.json), without
# touching the index or HEAD; a turn that changed nothing writes none. The JSON is read by
# `git hpp hook turn-checkpoint`. Prints nothing and always exits 0.
# Fails open: it guards nothing, so when git-hpp cannot run it still exits 0 and the agent
# goes on (the guarding hooks are the ones that fail closed).
# Usage: turn-checkpoint.sh [claude-code|codex]
git hpp hook turn-checkpoint --host "${1:-${HPP_HOST:-claude-code}}"
exit 0
