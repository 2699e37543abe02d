#!/usr/bin/env bash
# operator-kit/secret-guard: PreToolUse hook on Edit|Write|NotebookEdit|Bash (Codex:
# apply_patch|Bash) (exit_policy block). Denies a write whose text has the shape of a secret (a
# private key block, a live token), naming the file and the shape, never the value: the
# detector that keeps secrets out of snapshots and records. A Bash call counts as a write when
# it hands a patch to `apply_patch` (Codex's shell-borne patch) or names an output file (`>`,
# `>>`, `tee`); its whole text is read then. The JSON is read and written by
# `git hpp hook secret-guard`.
# Fails closed, under a deadline: `hpp-run.sh` gives git-hpp 20 s (the installed hook declares
# a `timeout` of 30); a host reads any exit but 2 as "allow", so a hang past the deadline, a
# crash, git-hpp missing, any exit but 0 and 2, and exit 0 with output that is not a JSON object
# all block (exit 2, one line on stderr). git-hpp's answers and refusals pass through unchanged.
# Usage: secret-guard.sh [claude-code|codex]
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
bash "$here/hpp-run.sh" guard "secret guard" 20 hook secret-guard --host "${1:-${HPP_HOST:-claude-code}}"
code=$?
[ "$code" = 0 ] || [ "$code" = 2 ] && exit "$code"
printf 'secret guard: %s/hpp-run.sh could not run (exit %s); the call is blocked\n' "$here" "$code" >&2
exit 2
