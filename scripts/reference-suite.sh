#!/usr/bin/env bash
# The Python harness's own test suite, run against git-hpp: every `python -m hpp ARGS` the suite
# spawns becomes `git hpp ARGS`, and the tests that import the reference's modules keep reading
# them. Prints the reference's own counts beside ours, and the tests that pass there and fail
# here. Needs python3 and network access to PyPI; it does not run in CI.
#
#   scripts/reference-suite.sh [VERSION]     (default 2.11.1; builds the release binary first)
set -euo pipefail
version="${1:-2.11.1}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cargo build --release --quiet --manifest-path "$repo/Cargo.toml"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet "pytest" "house-party-protocol==$version"
(cd "$work" && "$work/venv/bin/pip" download --quiet --no-deps --no-binary :all: \
    "house-party-protocol==$version")
tar -xzf "$work"/house_party_protocol-"$version".tar.gz -C "$work"
sdist="$work/house_party_protocol-$version"

# The shim: a copy of the package whose `python -m hpp` runs git's `hpp` command.
cp -r "$sdist" "$work/shim"
cat > "$work/shim/hpp/__main__.py" <<'EOF'
import os
import sys

if __name__ == "__main__":
    os.execvp("git", ["git", "hpp", *sys.argv[1:]])
EOF

run() { # DIR OUT
    (cd "$1" && PATH="$repo/target/release:$PATH" "$work/venv/bin/python" -m pytest -q \
        -p no:cacheprovider --continue-on-collection-errors tests >"$2" 2>&1) || true
}
run "$sdist" "$work/reference.txt"
run "$work/shim" "$work/git-hpp.txt"

failing() { grep -E '^(FAILED|ERROR) ' "$1" | awk '{print $2}' | sort; }
echo "reference: $(tail -n 1 "$work/reference.txt")"
echo "git-hpp:   $(tail -n 1 "$work/git-hpp.txt")"
echo "passing with the reference, failing with git-hpp:"
comm -13 <(failing "$work/reference.txt") <(failing "$work/git-hpp.txt") | sed 's/^/  /'
