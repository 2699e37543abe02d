#!/usr/bin/env bash
# Screenshots of `git hpp atlas` on a demo repository, for the README: docs/atlas.png at a
# desktop width and docs/atlas-phone.png at a phone width, with the layout checked at both
# (scripts/atlas-layout.mjs: the page never scrolls sideways, no two edge labels overlap).
#
# Usage: scripts/atlas-screenshot.sh [OUT.png]      (default: docs/atlas.png; the phone shot
#        goes beside it as <OUT>-phone.png)
#
# Needs `git`, `git hpp` on PATH (cargo install --locked --path . ; or put target/debug first on
# PATH), a headless Chromium and, for the layout check, node with playwright-core. This script
# installs nothing; on Debian or Ubuntu:
#
#     apt-get install -y chromium && npm install --prefix "$HOME/.cache/hpp-atlas" playwright-core
#
# (PLAYWRIGHT_DIR names another directory whose node_modules holds playwright-core.)
# It builds a throwaway repository (one loop walked to check_passed, a second just started, an
# evidence bundle, an approved attestation), writes its atlas with a fixed --now, opens the page
# from file:// with networking features off, and checks that the PNG exists and is not trivial.
set -eu -o pipefail

out=${1:-docs/atlas.png}
now=1764700000
chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$chromium" ]; then
  echo "atlas-screenshot: no chromium on PATH; install it with: apt-get install -y chromium" >&2
  exit 3
fi
git hpp --version >/dev/null

work=$(mktemp -d)
profile=$(mktemp -d)
trap 'rm -rf "$work" "$profile"' EXIT

# A hermetic git: no user or system config, a fixed identity for the demo's own commits.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null TZ=UTC LC_ALL=C
export GIT_AUTHOR_NAME=Demo GIT_AUTHOR_EMAIL=demo@example.com
export GIT_COMMITTER_NAME=Demo GIT_COMMITTER_EMAIL=demo@example.com

repo="$work/demo"
git init -q -b main "$repo"
cd "$repo"
printf '# Spec\nThe greeter says hello to the name it is given.\n' > SPEC.md
printf 'hello\n' > README
git add -A
git commit -q -m "spec"

git hpp event append --type work_started --loop greeter --work GREET-1 --maker maker-a >/dev/null
git hpp evidence run --id unit-tests --record-event --loop greeter --artifact out/report.txt \
  -- sh -c 'mkdir -p out && echo "3 passed" > out/report.txt' >/dev/null
git hpp attest create --spec SPEC.md --maker maker-a --checker checker-b --session review:000 \
  --verdict approved --loop greeter >/dev/null
git hpp event append --type check_passed --loop greeter >/dev/null
git hpp event append --type work_started --loop docs --work DOCS-1 --maker maker-a >/dev/null
git hpp evidence run --id lint -- true >/dev/null
printf 'out/\n' > .gitignore
git add -A
git commit -q -m "work"
git hpp attest create --spec SPEC.md --maker maker-a --checker checker-b \
  --session review:001 --verdict approved >/dev/null

git hpp atlas --html "$work/atlas.html" --now "$now"
cd - >/dev/null

mkdir -p "$(dirname "$out")"
rm -f "$out"
phone="${out%.png}-phone.png"
modules=${PLAYWRIGHT_DIR:-$HOME/.cache/hpp-atlas}/node_modules
if command -v node >/dev/null && [ -d "$modules/playwright-core" ]; then
  # The layout check takes both screenshots itself.
  PLAYWRIGHT_MODULES="$modules" node \
    "$(dirname "$0")/atlas-layout.mjs" "$work/atlas.html" "$out" "$phone" "$chromium"
else
  echo "atlas-screenshot: no playwright-core: screenshots only, the layout is not checked" >&2
  "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --screenshot="$out" --window-size=1400,1000 \
    "file://$work/atlas.html" >/dev/null 2>&1
fi

if [ ! -s "$out" ]; then
  echo "atlas-screenshot: chromium wrote no $out" >&2
  exit 1
fi
signature=$(head -c 8 "$out" | od -An -tx1 | tr -d ' \n')
if [ "$signature" != "89504e470d0a1a0a" ]; then
  echo "atlas-screenshot: $out is not a PNG" >&2
  exit 1
fi
size=$(wc -c < "$out")
# A blank 1400x1000 page compresses to a few kilobytes; a drawn atlas is far larger.
if [ "$size" -lt 30000 ]; then
  echo "atlas-screenshot: $out is only $size bytes: the page did not render" >&2
  exit 1
fi
echo "atlas-screenshot: wrote $out ($size bytes)"
