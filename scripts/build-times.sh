#!/usr/bin/env bash
# Build times of one checkout: a clean `cargo build`, then an incremental build after touching one
# CLI file, then one after touching one file of the pure protocol (the core).
#
# Usage: scripts/build-times.sh CHECKOUT CLI_FILE CORE_FILE
#   CHECKOUT   a checkout of this repository (a `git worktree add` of any commit works)
#   CLI_FILE   a file of the command-line layer, relative to CHECKOUT (e.g. src/cli/status.rs)
#   CORE_FILE  a file of the pure protocol, relative to CHECKOUT
#              (before the workspace split: src/policy/mod.rs;
#               after it: crates/hpp-core/src/policy/mod.rs)
#
# The target directory is a fresh temporary one, so the clean build is really clean; the
# registry must already hold the dependencies (run any `cargo build` once first). Run it on a
# quiet machine: the numbers are wall-clock seconds. Prints one line per build.
set -eu -o pipefail

checkout=$1
cli=$2
core=$3
target=$(mktemp -d)
trap 'rm -rf "$target"' EXIT
cd "$checkout"

build() {
  local label=$1
  local start end
  start=$(date +%s.%N)
  CARGO_TARGET_DIR="$target" cargo build --locked --offline --quiet
  end=$(date +%s.%N)
  printf '%-28s %6.1f s\n' "$label" "$(echo "$end - $start" | bc)"
}

build "clean build"
touch "$cli"
build "after touching $(basename "$cli")"
touch "$core"
build "after touching $(basename "$core")"
