"""A word-rule baseline for `git hpp decide eval`: deterministic, standard library only.

Reads {"question", "state"} on stdin and prints one hpp.decision/v1 record for the change-risk
question: the highest level whose words appear in the state, or an abstention when none does.
A word rule has no measured confidence, so it publishes null (the ruler refuses an invented one).
"""
import hashlib
import json
import re
import sys

WORDS = [  # checked from the most cautious level down
    ("high", {"auth", "checkout", "delete", "drops", "login", "migration", "payment", "session"}),
    ("medium", {"bump", "dependency", "refactor", "rename"}),
    ("low", {"comment", "comments", "doc", "docs", "readme", "typo"}),
]


def main():
    request = json.load(sys.stdin)
    state = request["state"]
    words = set(re.findall(r"[a-z]+", state.lower()))
    value = next((level for level, cues in WORDS if words & cues), None)
    outcome = ({"status": "recommendation", "value": value, "confidence": None} if value
               else {"status": "abstention", "value": None, "confidence": None})
    print(json.dumps({
        "schema": "hpp.decision/v1",
        "question": request["question"],
        "state_sha256": hashlib.sha256(state.encode("utf-8")).hexdigest(),
        "method": "lexical",
        "authority": "advisory",
        "direction": "informational",
        "outcome": outcome,
    }))


if __name__ == "__main__":
    main()
