"""A weak check of discount.py: right on typical orders, blind at the tier boundaries."""

import sys

from discount import discount

CASES = [
    ((20000, True), 2000),
    ((100, False), 0),
    ((6000, True), 250),
    ((5001, False), 250),
]

failures = [(args, want, discount(*args)) for args, want in CASES if discount(*args) != want]
for args, want, got in failures:
    print(f"discount{args} = {got}, expected {want}", file=sys.stderr)
sys.exit(1 if failures else 0)
