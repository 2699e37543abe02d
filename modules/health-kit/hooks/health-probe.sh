#!/usr/bin/env bash
# health-kit/health-probe: SessionStart hook (exit_policy observe).
# Runs the manifest's declared health probes that are due (none, or older than their monitor's
# cadence) and records each signal at refs/hpp/monitors/<id>, so `map monitor` and the atlas
# show measured freshness instead of unknown. A failing probe is a signal, not a refusal: prints
# nothing and always exits 0.
# Fails open, under a deadline: it guards nothing, so when git-hpp cannot run, or does not end
# within 20 s (`hpp-run.sh`; the installed hook declares a `timeout` of 30), it says so on
# stderr, exits 0, and the agent goes on (the guarding hooks are the ones that fail closed).
# Usage: health-probe.sh [claude-code|codex]
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
bash "$here/hpp-run.sh" note "health probe" 20 monitor probe --due >/dev/null
exit 0
