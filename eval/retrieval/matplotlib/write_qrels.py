#!/usr/bin/env python3
"""Write qrels/{test,dev,heldout}.tsv and state.jsonl from the hand-written table below
(run from the repo root), with consistency checks."""
import json
from pathlib import Path

D = Path("eval/retrieval/matplotlib")
# query -> {doc: grade}; the grades were decided by reading the grep hits in the notes.
J = {
 "q01": {"3.9": 2, "3.7": 1, "3.6": 1},
 "q02": {"3.8": 2, "3.6": 1, "3.4": 1, "3.0": 1},
 "q03": {"3.8": 2, "3.6": 1, "3.3": 1, "3.1": 1},
 "q04": {"3.0": 2, "2.0": 1, "3.1": 1},
 "q05": {"3.7": 2, "3.5": 1, "3.3": 1},
 "q06": {"3.5": 2, "3.3": 1},
 "q07": {"3.9": 2, "3.5": 1},
 "q08": {"3.8": 2, "3.6": 1},
 "q09": {"3.9": 2, "3.8": 1, "3.7": 1, "3.6": 1, "3.5": 1, "3.4": 1, "3.3": 1, "3.1": 1},
 "q10": {"3.5": 2, "3.3": 1},
 "q11": {"3.7": 2, "3.4": 1},
 "q12": {"3.7": 2, "3.5": 1},
 "q13": {"3.5": 2},
 "q14": {"3.2": 2, "3.4": 1},
 "q15": {"3.3": 2, "3.8": 1},
 "q16": {"2.0": 2, "2.2": 1, "3.0": 1},
 "q17": {"2.1": 2, "3.2": 1, "3.3": 1, "3.4": 1},
 "q18": {"3.4": 2},
 "q19": {"2.1": 2, "3.6": 1},
 "q20": {"3.9": 2, "3.5": 1},
 "q21": {"3.6": 2},
 "q22": {"3.2": 2},
 "q23": {"3.6": 2},
 "q24": {"3.4": 2},
 "q25": {"3.8": 2},
 "q26": {"3.9": 2},
 "q27": {"3.9": 2, "3.1": 1},
 "q28": {"3.1": 2},
 "q29": {"3.3": 2},
 "q30": {"2.1": 2},
 "q31": {"3.2": 2},
 "q32": {"3.7": 2},
 "q33": {"3.9": 2},
 "q34": {"3.8": 2},
 "q35": {"3.8": 2, "3.1": 1},
 "q36": {"3.8": 2, "3.5": 1},
 "q37": {"3.9": 2, "3.7": 1},
 "q38": {"3.9": 2, "3.7": 1},
 "q39": {"3.8": 2, "3.7": 1, "3.6": 1, "3.4": 1, "3.0": 1},
 "q40": {"3.6": 2, "3.4": 1},
}
J = {q: {f"matplotlib-{v}": g for v, g in d.items()} for q, d in J.items()}
# state query -> superseded notes (current = the query's single grade-2 note)
S = {
 "q01": ["3.7", "3.6"],
 "q02": ["3.6", "3.4", "3.0"],
 "q03": ["3.6", "3.3", "3.1"],
 "q04": ["2.0"],
 "q05": ["3.5", "3.3"],
 "q06": ["3.3"],
 "q07": ["3.5"],
 "q08": ["3.6"],
 "q09": ["3.8", "3.7", "3.6", "3.5", "3.4", "3.3", "3.1"],
 "q10": ["3.3"],
 "q11": ["3.4"],
 "q12": ["3.5"],
}
S = {q: [f"matplotlib-{v}" for v in vs] for q, vs in S.items()}

corpus = [json.loads(l) for l in (D / "corpus.jsonl").open(encoding="utf-8")]
ids = {d["_id"] for d in corpus}
order = {d["_id"]: i for i, d in enumerate(corpus)}
date = {d["_id"]: d["metadata"]["occurred_at"] for d in corpus}
queries = [json.loads(l) for l in (D / "queries.jsonl").open(encoding="utf-8")]
qmeta = {q["_id"]: q["metadata"] for q in queries}
assert set(J) == set(qmeta), "every query judged, no extra"
for q, g in J.items():
    assert set(g) <= ids, (q, set(g) - ids)
    assert all(v in (1, 2) for v in g.values())
    assert 2 in g.values(), q
assert set(S) == {q for q, m in qmeta.items() if m["kind"] == "state"}
pairs = []
for q, sup in S.items():
    cur = [d for d, v in J[q].items() if v == 2]
    assert len(cur) == 1, q
    for s in sup:
        assert J[q][s] == 1, (q, s)
        assert date[s] < date[cur[0]], (q, s)
        pairs.append({"query_id": q, "current": cur[0], "superseded": s})

def lines(qs):
    out = ["query-id\tcorpus-id\tscore"]
    for q in sorted(qs):
        for d in sorted(J[q], key=lambda d: (-J[q][d], -order[d])):
            out.append(f"{q}\t{d}\t{J[q][d]}")
    return "\n".join(out) + "\n"

(D / "qrels").mkdir(exist_ok=True)
dev = [q for q, m in qmeta.items() if m["split"] == "dev"]
test = [q for q, m in qmeta.items() if m["split"] == "test"]
(D / "qrels/test.tsv").write_text(lines(J))
(D / "qrels/dev.tsv").write_text(lines(dev))
(D / "qrels/heldout.tsv").write_text(lines(test))
(D / "state.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs))
n = lambda qs: sum(len(J[q]) for q in qs)
assert n(dev) + n(test) == n(J)
g2 = sum(v == 2 for g in J.values() for v in g.values())
print(f"{len(J)} queries ({len(dev)} dev, {len(test)} test); {n(J)} judgements ({g2} of grade 2, {n(J)-g2} of grade 1); "
      f"dev {n(dev)}, heldout {n(test)}; {len(pairs)} state pairs over {len(S)} queries; "
      f"{len({d for g in J.values() for d in g})} of {len(ids)} documents judged")
print("unjudged:", sorted(ids - {d for g in J.values() for d in g}, key=order.get))
