#!/usr/bin/env python3
"""Inter-annotator agreement on the epistemic-type label.

Labeller A: the committed labels (`fresh.jsonl`, and the `test` split of
`sentences.jsonl`). Labeller B: `second_labels.jsonl`, a second, blind
labelling of the same units (`{"id", "type"}` per line).

Prints, per set (fresh, test, both): raw agreement, Cohen's kappa,
macro-F1 of B against A over the nine non-NOISE types (the definition of
`epigraph eval extraction`: NOISE counts as a class for precision and
recall but is not averaged; a class enters the average only if A has it),
macro-F1 over all ten types, per-type F1 and a confusion matrix (A rows x
B columns).

Usage: python3 eval/extraction/real/agreement.py
Standard library only.
"""

import json
import os
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = ["DECISION", "CONSTRAINT", "EVIDENCE", "NARRATIVE", "PLAN",
         "EVALUATION", "OBSERVATION", "HYPOTHESIS", "QUESTION", "NOISE"]
NINE = TYPES[:-1]
ABBR = {"DECISION": "DEC", "CONSTRAINT": "CON", "EVIDENCE": "EVI",
        "NARRATIVE": "NAR", "PLAN": "PLA", "EVALUATION": "EVA",
        "OBSERVATION": "OBS", "HYPOTHESIS": "HYP", "QUESTION": "QUE",
        "NOISE": "NOI"}


def load(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def scores(pairs):
    """pairs: list of (a, b). Returns per-class dict and macro figures."""
    support, predicted, correct = Counter(), Counter(), Counter()
    for a, b in pairs:
        support[a] += 1
        predicted[b] += 1
        if a == b:
            correct[a] += 1
    per = {}
    for c in TYPES:
        p = correct[c] / predicted[c] if predicted[c] else 0.0
        r = correct[c] / support[c] if support[c] else 0.0
        f = 2 * p * r / (p + r) if p + r > 0 else 0.0
        per[c] = (support[c], predicted[c], p, r, f)

    def mean(classes):
        f1s = [per[c][4] for c in classes if per[c][0] > 0]
        return sum(f1s) / len(f1s) if f1s else 0.0

    return per, mean(NINE), mean(TYPES)


def kappa(pairs):
    n = len(pairs)
    if n == 0:
        return 0.0
    po = sum(a == b for a, b in pairs) / n
    ca = Counter(a for a, _ in pairs)
    cb = Counter(b for _, b in pairs)
    pe = sum(ca[c] * cb[c] for c in TYPES) / (n * n)
    return (po - pe) / (1 - pe) if pe < 1 else 1.0


def report(name, pairs):
    n = len(pairs)
    agree = sum(a == b for a, b in pairs)
    per, m9, m10 = scores(pairs)
    print("=" * 72)
    print("set: %s   units: %d" % (name, n))
    print("raw agreement   %.3f  (%d/%d)" % (agree / n if n else 0, agree, n))
    print("Cohen's kappa   %.3f" % kappa(pairs))
    print("macro-F1 (nine types, B vs A)  %.3f" % m9)
    print("macro-F1 (with NOISE)          %.3f" % m10)
    print()
    print("%-12s %5s %5s %6s %6s %6s" % ("type", "A", "B", "P", "R", "F1"))
    for c in TYPES:
        s, p_, p, r, f = per[c]
        print("%-12s %5d %5d %6.3f %6.3f %6.3f" % (c, s, p_, p, r, f))
    print()
    print("confusion (rows: A, columns: B)")
    conf = Counter(pairs)
    print("%-4s " % "" + " ".join("%4s" % ABBR[c] for c in TYPES) + "  sum")
    for a in TYPES:
        row = [conf[(a, b)] for b in TYPES]
        print("%-4s " % ABBR[a] + " ".join("%4s" % (v if v else ".") for v in row)
              + "  %3d" % sum(row))
    print()
    off = Counter({k: v for k, v in conf.items() if k[0] != k[1]})
    print("most frequent disagreements (A -> B):")
    for (a, b), v in off.most_common(10):
        print("  %3d  %s -> %s" % (v, a, b))
    print()


def main():
    second = {r["id"]: r["type"] for r in load("second_labels.jsonl")}
    fresh = {r["id"]: r["type"] for r in load("fresh.jsonl")}
    test = {r["id"]: r["type"] for r in load("sentences.jsonl")
            if r.get("split") == "test"}
    for label, b in second.items():
        if label not in fresh and label not in test:
            sys.exit("second_labels.jsonl: unknown id %s" % label)
        if b not in TYPES:
            sys.exit("second_labels.jsonl: bad type %r for %s" % (b, label))
    sets = {}
    for name, first in (("fresh", fresh), ("test", test)):
        missing = [i for i in first if i not in second]
        if missing:
            print("note: %d %s units have no second label (e.g. %s)"
                  % (len(missing), name, missing[0]))
        sets[name] = [(first[i], second[i]) for i in sorted(first) if i in second]
    sets["both"] = sets["fresh"] + sets["test"]
    for name in ("fresh", "test", "both"):
        report(name, sets[name])


if __name__ == "__main__":
    main()
