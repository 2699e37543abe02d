#!/usr/bin/env bash
# operator-kit/policy-gate: PreToolUse hook (exit_policy block).
# Classifies the Bash command of the tool call with the command policy and answers the host's
# PreToolUse protocol: deny for BLOCK, ask for MANUAL (deny on Codex, which cannot ask), nothing
# for ALLOW so the host's own permission rules still decide.
# Fails closed, under a deadline: `hpp-run.sh` gives git-hpp 20 s (the installed hook declares
# a `timeout` of 30); a host reads any exit but 2 as "allow", so a hang past the deadline, a
# crash, git-hpp missing, any exit but 0 and 2, and exit 0 with output that is not a JSON object
# all block (exit 2, one line on stderr). git-hpp's answers and refusals pass through unchanged.
# Usage: policy-gate.sh [claude-code|codex]   (default: $HPP_HOST, else claude-code)
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
bash "$here/hpp-run.sh" guard "policy gate" 20 policy hook --host "${1:-${HPP_HOST:-claude-code}}"
code=$?
[ "$code" = 0 ] || [ "$code" = 2 ] && exit "$code"
printf 'policy gate: %s/hpp-run.sh could not run (exit %s); the call is blocked\n' "$here" "$code" >&2
exit 2
