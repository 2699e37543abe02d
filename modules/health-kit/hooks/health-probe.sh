#!/usr/bin/env bash
# health-kit/health-probe: SessionStart hook (exit_policy observe).
# Runs the manifest's declared health probes that are due (none, or older than their monitor's
# cadence) and records each signal at refs/hpp/monitors/<id>, so `map monitor` and the atlas
# show measured freshness instead of unknown. A failing probe is a signal, not a refusal: prints
# nothing and always exits 0.
# Fails open: it guards nothing, so when git-hpp cannot run it still exits 0 and the agent
# goes on (the guarding hooks are the ones that fail closed).
# Usage: health-probe.sh [claude-code|codex]
git hpp monitor probe --due >/dev/null 2>&1
exit 0
