#!/usr/bin/env bash
# operator-kit/policy-gate: PreToolUse hook (exit_policy block).
# Classifies the Bash command of the tool call with the command policy and answers the host's
# PreToolUse protocol: deny for BLOCK, ask for MANUAL (deny on Codex, which cannot ask), nothing
# for ALLOW so the host's own permission rules still decide.
# Fails closed: a host reads any exit but 2 as "allow", so when git-hpp cannot run (not on PATH,
# or it ends with an internal error, exit 3, or a crash) the call is blocked (exit 2, one line on
# stderr). git-hpp's answers and refusals pass through unchanged.
# Usage: policy-gate.sh [claude-code|codex]   (default: $HPP_HOST, else claude-code)
exec 3>&1
err=$(git hpp policy hook --host "${1:-${HPP_HOST:-claude-code}}" 2>&1 1>&3 3>&-)
code=$?
exec 3>&-
if [ "$code" = 0 ] || [ "$code" = 2 ] || { [ "$code" = 1 ] && git hpp --version >/dev/null 2>&1; }; then
  [ -z "$err" ] || printf '%s\n' "$err" >&2
  exit "$code"
fi
nl='
'
why=${err%%"$nl"*}
printf 'policy gate: git-hpp could not run (exit %s%s); the call is blocked until `git hpp --version` works\n' "$code" "${why:+: $why}" >&2
exit 2
