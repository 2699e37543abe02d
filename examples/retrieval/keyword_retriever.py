"""A keyword baseline for `git hpp retrieval eval`: deterministic, standard library only.

Reads {"query": text, "k": n} on stdin, ranks the articles of corpus.json (next to this file)
by how many distinct query words each one contains (ties by id), and prints the top k that share
at least one word as {"results": [{"id", "score"}]}. It knows no synonyms, on purpose: the suite
shows what a baseline without them misses.
"""
import json
import re
import sys
from pathlib import Path

STOP = {"a", "an", "and", "are", "at", "do", "does", "for", "from", "how", "i", "in", "is", "it",
        "my", "of", "on", "or", "the", "to", "what", "when", "which", "with", "why"}


def words(text):
    return {word for word in re.findall(r"[a-z]+", text.lower()) if word not in STOP}


def main():
    request = json.load(sys.stdin)
    corpus = json.loads((Path(__file__).parent / "corpus.json").read_text(encoding="utf-8"))
    query = words(request["query"])
    scored = [(len(query & words(text)), doc_id) for doc_id, text in corpus.items()]
    ranked = sorted((item for item in scored if item[0] > 0), key=lambda item: (-item[0], item[1]))
    top = ranked[: request["k"]]
    print(json.dumps({"results": [{"id": doc_id, "score": score} for score, doc_id in top]}))


if __name__ == "__main__":
    main()
