#!/usr/bin/env bash
# operator-kit/policy-gate: PreToolUse hook (exit_policy block).
# Classifies the Bash command of the tool call with the command policy and answers the host's
# PreToolUse protocol: deny for BLOCK, ask for MANUAL (deny on Codex, which cannot ask), nothing
# for ALLOW so the host's own permission rules still decide.
# Usage: policy-gate.sh [claude-code|codex]   (default: $HPP_HOST, else claude-code)
exec git hpp policy hook --host "${1:-${HPP_HOST:-claude-code}}"
