#!/usr/bin/env bash
# operator-kit/loop-gate: Stop hook (exit_policy block).
# Blocks the agent from finishing while the current harness loop (the branch's loop, as
# `git hpp status` reads it) has started but is not verified, and tells it the next step.
# Allows the stop when no loop was started, when the loop is verified, outside a repository,
# and always when the host says a Stop hook already continued this turn (stop_hook_active),
# and after 3 blocks of the same session in a row, so it can never keep the agent running forever. The JSON is read and written by
# `git hpp hook loop-gate`.
# Usage: loop-gate.sh [claude-code|codex]   (both hosts read {"decision":"block","reason":...})
exec git hpp hook loop-gate --host "${1:-${HPP_HOST:-claude-code}}"
