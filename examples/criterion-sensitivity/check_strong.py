"""A strong check of discount.py: typical orders and both sides of every boundary."""

import sys

from discount import discount

CASES = [
    ((20000, True), 2000),
    ((20000, False), 250),
    ((10000, True), 1000),
    ((9999, True), 250),
    ((6000, True), 250),
    ((5001, False), 250),
    ((5000, False), 0),
    ((100, False), 0),
]

failures = [(args, want, discount(*args)) for args, want in CASES if discount(*args) != want]
for args, want, got in failures:
    print(f"discount{args} = {got}, expected {want}", file=sys.stderr)
sys.exit(1 if failures else 0)
