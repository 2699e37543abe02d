#!/bin/sh
# Best-of-two on the lane board, end to end: two lanes of two model families build the same
# task, each checkpoints with an evidence bundle, a checker of a third family selects one, the
# loser is NOT-SELECTED for good, the winner is verified and merged. Prints the board.
#
# Run it in a scratch repository with one commit (it writes out/ and refs/hpp/):
#   git init -q demo && cd demo && git commit -q --allow-empty -m init && sh .../best-of-n.sh
set -eu

board() { git hpp board "$@" >/dev/null; }

board claim A --lane lane-a --model gpt-5
board claim B --lane lane-b --model gemini-2.5-pro
board compete --task T1 --items A,B --lane coord --model gpt-5

build() { # item lane model
    board set "$1" BUILDING --lane "$2" --role executor --model "$3"
    git hpp evidence run --id "ev-$1" --artifact "out/$1.txt" -- \
        sh -c "mkdir -p out && echo attempt $1 > out/$1.txt" >/dev/null
    board set "$1" CHECKPOINT-READY --lane "$2" --role executor --model "$3" \
        --evidence-record "ev-$1"
}
build A lane-a gpt-5
build B lane-b gemini-2.5-pro

board select --task T1 --winner A --lane rev --model claude-opus-4 --reason "smaller diff"
board start-review A --target-lane rev --target-model claude-opus-4 --lane coord --model gpt-5
board set A VERIFIED --lane rev --role reviewer --model claude-opus-4 \
    --verdict-by-lane rev --verdict-by-model claude-opus-4
board set A MERGED --lane lane-a --role executor --model gpt-5 --branch lane-a

# The loser never moves again: a board rule refuses (exit 1).
if git hpp board set B BUILDING --lane lane-b --role executor --model gemini-2.5-pro 2>/dev/null
then
    echo "B moved after NOT-SELECTED" >&2
    exit 1
fi

git hpp board render
