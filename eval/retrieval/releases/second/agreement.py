#!/usr/bin/env python3
"""Agreement of the second judge (second/labels.tsv) with qrels/test.tsv on second/sample.json.

Usage (from the repository root): python3 eval/retrieval/releases/second/agreement.py [SET]
SET is a retrieval set's folder with a `second/` of its own (default: eval/retrieval/releases).
Prints exact agreement and Cohen's kappa (grades 0/1/2) on the pairs the first judge graded,
on every candidate (a decoy the first judge did not grade counts as 0), and relevant-or-not.
"""
import collections
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SET = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else HERE.parent
SECOND = SET / "second"


def tsv(path):
    rows = {}
    for i, line in enumerate(path.read_text().splitlines()):
        if i and line.strip():
            q, d, s = line.split("\t")
            rows[(q, d)] = int(s)
    return rows


def kappa(pairs):
    n = len(pairs)
    po = sum(a == b for a, b in pairs) / n
    ca = collections.Counter(a for a, _ in pairs)
    cb = collections.Counter(b for _, b in pairs)
    pe = sum(ca[k] * cb[k] for k in set(ca) | set(cb)) / n / n
    return po, (po - pe) / (1 - pe)


def main():
    first = tsv(SET / "qrels/test.tsv")
    second = tsv(SECOND / "labels.tsv")
    sample = json.loads((SECOND / "sample.json").read_text())["queries"]
    everything, graded = [], []
    for q in sample:
        for d in q["candidates"]:
            pair = (first.get((q["query_id"], d), 0), second[(q["query_id"], d)])
            everything.append(pair)
            if (q["query_id"], d) in first:
                graded.append(pair)
    for name, pairs in [
        ("pairs the first judge graded", graded),
        ("all candidates", everything),
        ("relevant or not, all candidates", [(a > 0, b > 0) for a, b in everything]),
    ]:
        print(f"{name} ({len(pairs)}): exact {kappa(pairs)[0]:.3f}, kappa {kappa(pairs)[1]:.3f}")
    print("first -> second:", dict(collections.Counter(everything)))


if __name__ == "__main__":
    main()
