#!/usr/bin/env bash
# operator-kit/secret-guard: PreToolUse hook on Edit|Write|NotebookEdit (Codex: apply_patch)
# (exit_policy block). Denies a write whose text has the shape of a secret (a private key block,
# a live token), naming the file and the shape, never the value: the detector that keeps
# secrets out of snapshots and records. The JSON is read and written by
# `git hpp hook secret-guard`.
# Fails closed: a host reads any exit but 2 as "allow", so when git-hpp cannot run (not on PATH,
# or it ends with an internal error, exit 3, or a crash) the write is blocked (exit 2, one line
# on stderr). git-hpp's answers and refusals pass through unchanged.
# Usage: secret-guard.sh [claude-code|codex]
exec 3>&1
err=$(git hpp hook secret-guard --host "${1:-${HPP_HOST:-claude-code}}" 2>&1 1>&3 3>&-)
code=$?
exec 3>&-
if [ "$code" = 0 ] || [ "$code" = 2 ] || { [ "$code" = 1 ] && git hpp --version >/dev/null 2>&1; }; then
  [ -z "$err" ] || printf '%s\n' "$err" >&2
  exit "$code"
fi
nl='
'
why=${err%%"$nl"*}
printf 'secret guard: git-hpp could not run (exit %s%s); the write is blocked until `git hpp --version` works\n' "$code" "${why:+: $why}" >&2
exit 2
