#!/usr/bin/env bash
# operator-kit/evidence-gate: Stop hook (exit_policy block).
# Runs every criterion command configured in git config hpp.criterion (multi-valued; each value
# is an argv as a JSON array of strings, e.g. ["cargo","test","--quiet"]) through
# `git hpp evidence run`, so each run is recorded as an evidence bundle under refs/hpp/evidence/,
# and blocks the stop while any of them does not pass. With no criterion configured it allows
# the stop and says that nothing is configured. It always ends: it lets the stop go when the
# host says a Stop hook already continued the turn (stop_hook_active), and after 3 blocks of the
# same session in a row on any host (Codex caps nothing). The JSON is read and written by
# `git hpp hook evidence-gate`.
# Usage: evidence-gate.sh [claude-code|codex]   (both hosts read {"decision":"block","reason":...})
exec git hpp hook evidence-gate --host "${1:-${HPP_HOST:-claude-code}}"
