#!/usr/bin/env python3
"""Inter-annotator agreement on a KEP or PEP epistemic set (stdlib only).

Usage:
    python3 eval/epistemics/keps/agreement.py [SET_DIR]

SET_DIR defaults to this script's folder. It compares the first labeller's labels
(`labels.jsonl`, `judged_pairs.jsonl`) with the second labeller's (`second/labels.jsonl`,
`second/judged_pairs.jsonl`) on the document pairs both judged, and prints JSON:

  * per relation: the pairs each labeller marked, both, Cohen's kappa over the decision
    "does this relation hold for this pair" (directed pairs for directed relations, unordered
    for CONTRADICTS), and positive agreement (2*both / (first + second));
  * "any relation": whether the pair carries some relation at all;
  * "SUPPORTS or BASED_ON": the two read as one, as the evaluation scores them.

With `plans.jsonl` on both sides (a set that labels plans and their reports, as `django`), it
also prints the agreement on each plan's outcome and on the document that reports it.

It also checks the files: every id names a KEP folder, a PEP or a text document of the
fixtures, every pair lies inside its group, every evidence quote is a verbatim substring of its
document (a KEP's README.md or kep.yaml).
Exit status 1 on a failed check.
"""
import json
import os
import sys
from itertools import permutations

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
KEPS = os.path.join(REPO, "tests", "fixtures", "keps", "keps")
PEPS = os.path.join(REPO, "tests", "fixtures", "peps")
# Folders of text documents (`<id>.txt`): Django's, NumPy's, SciPy's and Pillow's release notes.
TEXTS = [os.path.join(REPO, "tests", "fixtures", name)
         for name in ("django-releases", "numpy-releases", "scipy-releases", "pillow-releases",
                       "matplotlib-api-changes")]


def path_of(doc):
    """A KEP folder (`sig-node/753-sidecar-containers`), a PEP file (`pep-0008`) or a text
    document (`django-4.0`, `numpy-1.20`: release notes)."""
    if doc.startswith("pep-"):
        return os.path.join(PEPS, doc + ".rst")
    for folder in TEXTS:
        if os.path.exists(os.path.join(folder, doc + ".txt")):
            return os.path.join(folder, doc + ".txt")
    return os.path.join(KEPS, doc)
RELATIONS = ["SUPERSEDES", "CONTRADICTS", "SUPPORTS", "BASED_ON", "IMPLEMENTS", "REFINES",
             "ANSWERS", "RELATION_CHANGE"]


def lines(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(l) for l in f if l.strip()]


def text_of(kep):
    if os.path.isfile(path_of(kep)):
        with open(path_of(kep), encoding="utf-8") as f:
            return f.read()
    out = ""
    for name in ("README.md", "kep.yaml"):
        p = os.path.join(KEPS, kep, name)
        if os.path.exists(p):
            with open(p, encoding="utf-8") as f:
                out += f.read() + "\n"
    return out


def check(groups, judged, labels, who):
    errors = []
    # A document may belong to several groups (Django's release notes do).
    members = {}
    for g in groups:
        for k in g.get("keps") or g.get("docs") or []:
            members.setdefault(g["group"], set()).add(k)
            if not os.path.exists(path_of(k)):
                errors.append("%s: no document %s" % (who, k))
    in_group = lambda doc, group: doc in members.get(group, set())
    for p in judged:
        if not (in_group(p["a"], p["group"]) and in_group(p["b"], p["group"])):
            errors.append("%s: judged pair outside its group: %s" % (who, p))
    cache = {}
    norm = lambda s: " ".join(s.split())
    for l in labels:
        if l["relation"] not in RELATIONS:
            errors.append("%s: unknown relation %s" % (who, l["relation"]))
        for side in ("from", "to"):
            if not in_group(l[side], l["group"]):
                errors.append("%s: label outside its group: %s" % (who, l))
        for side, quote in (("from", l.get("evidence_from", "")), ("to", l.get("evidence_to", ""))):
            if not quote:
                continue
            kep = l[side]
            if kep not in cache:
                cache[kep] = norm(text_of(kep))
            if norm(quote) not in cache[kep]:
                errors.append("%s: quote not verbatim in %s: %r" % (who, kep, quote[:80]))
    return errors


def kappa(a, b, universe):
    n = len(universe)
    if n == 0:
        return None
    both = len(a & b)
    neither = n - len(a | b)
    po = (both + neither) / n
    pa, pb = len(a) / n, len(b) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    return 1.0 if pe == 1 else (po - pe) / (1 - pe)


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else HERE
    groups = lines(os.path.join(d, "groups.jsonl"))
    first = (lines(os.path.join(d, "judged_pairs.jsonl")), lines(os.path.join(d, "labels.jsonl")))
    second = (lines(os.path.join(d, "second", "judged_pairs.jsonl")),
              lines(os.path.join(d, "second", "labels.jsonl")))
    errors = check(groups, *first, "first") + check(groups, *second, "second")
    both_judged = ({tuple(sorted((p["a"], p["b"]))) for p in first[0]}
                   & {tuple(sorted((p["a"], p["b"]))) for p in second[0]})
    directed = {x for a, b in both_judged for x in permutations((a, b))}
    # Self pairs (ANSWERS within one document) of the KEPs both judged.
    keps = {k for pair in both_judged for k in pair}
    selves = {(k, k) for k in keps}

    def marked(labels, relations, unordered=False):
        out = set()
        for l in labels:
            if l["relation"] in relations:
                pair = (l["from"], l["to"])
                out.add(tuple(sorted(pair)) if unordered else pair)
        return out

    report = {"pairs_judged_by_both": len(both_judged), "relations": {}}
    views = [(r, [r], r == "CONTRADICTS") for r in RELATIONS]
    views.append(("SUPPORTS or BASED_ON", ["SUPPORTS", "BASED_ON"], False))
    views.append(("any relation", RELATIONS, True))
    for name, rels, unordered in views:
        universe = set(both_judged) if unordered else directed | (selves if "ANSWERS" in rels else set())
        a = marked(first[1], rels, unordered) & universe
        b = marked(second[1], rels, unordered) & universe
        k = kappa(a, b, universe)
        report["relations"][name] = {
            "first": len(a), "second": len(b), "both": len(a & b),
            "kappa": None if k is None else round(k, 3),
            "positive_agreement": round(2 * len(a & b) / (len(a) + len(b)), 3) if a or b else None,
        }
    report["plans"] = plan_agreement(d, errors)
    report["errors"] = errors
    print(json.dumps(report, indent=2))


def plan_agreement(d, errors):
    """The plans both annotators judged (`plans.jsonl` and `second/plans.jsonl`, matched by
    group, document and text): agreement on the outcome (done / not_reported / changed, Cohen's
    kappa over the three) and, where both say done or changed, on the reporting document."""
    first = lines(os.path.join(d, "plans.jsonl"))
    second = lines(os.path.join(d, "second", "plans.jsonl"))
    if not first or not second:
        return None
    key = lambda p: (p["group"], p["plan_doc"], " ".join(p["plan_text"].split()))
    norm = lambda s: " ".join(s.split())
    for who, plans in (("first", first), ("second", second)):
        for p in plans:
            for doc, quote in ((p["plan_doc"], p["plan_text"]), (p.get("report_doc"), p.get("report_text"))):
                if doc and quote and norm(quote) not in norm(text_of(doc)):
                    errors.append("%s: plan quote not verbatim in %s: %r" % (who, doc, quote[:80]))
    a = {key(p): p for p in first}
    b = {key(p): p for p in second}
    both = sorted(set(a) & set(b))
    if not both:
        return {"plans_judged_by_both": 0}
    outcomes = sorted({a[k]["outcome"] for k in both} | {b[k]["outcome"] for k in both})
    agree = sum(a[k]["outcome"] == b[k]["outcome"] for k in both)
    po = agree / len(both)
    pe = sum((sum(a[k]["outcome"] == o for k in both) / len(both))
             * (sum(b[k]["outcome"] == o for k in both) / len(both)) for o in outcomes)
    reported = [k for k in both if a[k]["outcome"] == b[k]["outcome"] != "not_reported"]
    return {
        "plans_judged_by_both": len(both),
        "outcome_agreement": round(po, 3),
        "outcome_kappa": None if pe == 1 else round((po - pe) / (1 - pe), 3),
        "first": {o: sum(a[k]["outcome"] == o for k in both) for o in outcomes},
        "second": {o: sum(b[k]["outcome"] == o for k in both) for o in outcomes},
        "same_report_document": "%d of %d" % (
            sum(a[k].get("report_doc") == b[k].get("report_doc") for k in reported), len(reported)),
    }
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
