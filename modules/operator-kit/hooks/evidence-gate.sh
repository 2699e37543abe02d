#!/usr/bin/env bash
# operator-kit/evidence-gate: Stop hook (exit_policy block).
# Runs every criterion command configured in git config hpp.criterion (multi-valued; each value
# is an argv as a JSON array of strings, e.g. ["cargo","test","--quiet"]) through
# `git hpp evidence run`, so each run is recorded as an evidence bundle under refs/hpp/evidence/,
# and blocks the stop while any of them does not pass. Within a budget (git config
# hpp.evidenceGate.budgetSeconds, default 480): a criterion still running at its edge goes on in
# the background and the stop is blocked as "not checked yet"; the next stop answers from the
# evidence it records (a bundle for the same command and workspace tree answers without a run).
# With no criterion configured it allows the stop and says that nothing is configured. It always ends: it lets the stop go when the
# host says a Stop hook already continued the turn (stop_hook_active), and after 3 blocks of the
# same session in a row on any host (Codex caps nothing). The JSON is read and written by
# `git hpp hook evidence-gate`.
# Fails closed, under a deadline: `hpp-run.sh` gives git-hpp 540 s (the installed hook declares
# a `timeout` of 600); a hang past it, a crash, git-hpp missing, any exit but 0 and 2, or exit 0
# with output that is not a JSON object blocks the stop (exit 2, one line on stderr), unless the
# payload says stop_hook_active, which lets it go with a warning: with no git-hpp there is no
# count of blocks, and a broken install must not keep a session running forever.
# Usage: evidence-gate.sh [claude-code|codex]   (both hosts read {"decision":"block","reason":...})
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
payload=$(cat)
printf '%s\n' "$payload" | bash "$here/hpp-run.sh" stop "evidence gate" 540 hook evidence-gate --host "${1:-${HPP_HOST:-claude-code}}"
code=$?
[ "$code" = 0 ] || [ "$code" = 2 ] && exit "$code"
case $payload in
  *'"stop_hook_active":true'* | *'"stop_hook_active": true'*)
    printf 'evidence gate: %s/hpp-run.sh could not run (exit %s); the stop goes unchecked\n' "$here" "$code" >&2
    exit 0 ;;
esac
printf 'evidence gate: %s/hpp-run.sh could not run (exit %s); the stop is blocked\n' "$here" "$code" >&2
exit 2
