#!/usr/bin/env bash
# operator-kit/secret-guard: PreToolUse hook on Edit|Write|NotebookEdit (Codex: apply_patch)
# (exit_policy block). Denies a write whose text has the shape of a secret (a private key block,
# a live token), naming the file and the shape, never the value: the detector that keeps
# secrets out of snapshots and records. The JSON is read and written by
# `git hpp hook secret-guard`.
# Usage: secret-guard.sh [claude-code|codex]
exec git hpp hook secret-guard --host "${1:-${HPP_HOST:-claude-code}}"
