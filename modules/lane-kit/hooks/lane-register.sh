#!/usr/bin/env bash
# lane-kit/lane-register: SessionStart and PostToolUse hook (exit_policy observe).
# Reads the host's hook JSON on stdin and hands it to `git hpp lane heartbeat --hook HOST`: the
# payload's cwd picks the lane (the open lane whose worktree holds it). On SessionStart the lane
# gets a heartbeat and the agent is told its lane, territory and branch; on any other event (a
# PostToolUse) the lane gets a heartbeat at most once every HPP_LANE_HEARTBEAT_EVERY seconds
# (default 60). Outside a lane, or without git-hpp, it says nothing. It never blocks the agent.
# Fails open, under a deadline: it guards nothing, so when git-hpp cannot run, or does not end
# within 20 s (`hpp-run.sh`; the installed hook declares a `timeout` of 30), it says so on
# stderr, exits 0, and the agent goes on (the guarding hooks are the ones that fail closed).
# Usage: lane-register.sh [claude-code|codex]   (the same line for both events)
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
bash "$here/hpp-run.sh" note "lane register" 20 lane heartbeat --hook "${1:-claude-code}" --min-interval "${HPP_LANE_HEARTBEAT_EVERY:-60}"
exit 0
