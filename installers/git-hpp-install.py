#!/usr/bin/env python3
"""The module installer the Python harness names from hpp.manifest.json (`installer.path`).

Its `hpp init` prints, for each module to copy, `python <installer.path> install --kit
<module path> --host <host> --target <dir> --apply`. This script runs the same install with
git-hpp: `git hpp install --host <host> --module <module id> --target <dir> [--apply]`, with the
manifest beside this script's directory, and exits with its exit code (3 when git-hpp cannot
run). It copies nothing itself.
"""
import argparse
import os
import subprocess
import sys


def main(argv):
    parser = argparse.ArgumentParser(prog="git-hpp-install.py")
    commands = parser.add_subparsers(dest="command", required=True)
    install = commands.add_parser("install", help="install one module with git hpp install")
    install.add_argument("--kit", required=True, help="the module's directory (its name is the module id)")
    install.add_argument("--host", required=True)
    install.add_argument("--target", default=".")
    install.add_argument("--apply", action="store_true")
    args = parser.parse_args(argv)
    module = os.path.basename(os.path.normpath(args.kit))
    command = ["git", "hpp", "install", "--host", args.host, "--module", module, "--target", args.target]
    manifest = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "hpp.manifest.json")
    if os.path.isfile(manifest):
        command += ["--manifest", os.path.normpath(manifest)]
    if args.apply:
        command.append("--apply")
    try:
        return subprocess.call(command)
    except OSError as exc:
        print(f"hpp: git hpp cannot run: {exc}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
