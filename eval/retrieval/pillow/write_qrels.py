#!/usr/bin/env python3
"""Write qrels/{test,dev,heldout}.tsv and state.jsonl from the hand-written table below
(run from the repo root), with consistency checks."""
import json
from pathlib import Path

D = Path("eval/retrieval/pillow")
# query -> {doc: grade}; the grades were decided by reading the grep hits in the notes.
J = {
 "q01": {"pillow-10.0": 2, "pillow-9.1": 1, "pillow-2.7": 1, "pillow-9.4": 1},
 "q02": {"pillow-11.0": 2, "pillow-9.0": 1, "pillow-8.0": 1, "pillow-7.0": 1, "pillow-6.0": 1, "pillow-5.0": 1, "pillow-4.0": 1},
 "q03": {"pillow-9.0": 2, "pillow-7.1": 1, "pillow-7.0": 1, "pillow-5.2": 1},
 "q04": {"pillow-7.0": 2, "pillow-6.1": 1, "pillow-4.1": 1},
 "q05": {"pillow-10.0": 2, "pillow-9.2": 1, "pillow-8.0": 1},
 "q06": {"pillow-10.0": 2, "pillow-9.2": 1, "pillow-7.0": 1, "pillow-6.0": 1, "pillow-8.1": 1, "pillow-8.2": 1},
 "q07": {"pillow-11.0": 2, "pillow-8.3": 1, "pillow-7.0": 1},
 "q08": {"pillow-10.3": 2, "pillow-10.2": 1, "pillow-9.0": 1, "pillow-11.0": 1},
 "q09": {"pillow-4.2": 2, "pillow-3.4": 1},
 "q10": {"pillow-11.0": 2, "pillow-9.0": 1, "pillow-8.1": 1},
 "q11": {"pillow-7.1": 2, "pillow-5.4": 1},
 "q12": {"pillow-6.0": 2, "pillow-6.2": 1, "pillow-8.2": 1, "pillow-8.3": 1, "pillow-3.1": 1},
 "q13": {"pillow-3.0": 2, "pillow-3.4": 1, "pillow-4.2": 1},
 "q14": {"pillow-8.2": 2, "pillow-9.5": 1},
 "q15": {"pillow-4.2": 2, "pillow-5.0": 1, "pillow-6.1": 1, "pillow-8.2": 1},
 "q16": {"pillow-8.2": 2, "pillow-8.3": 1, "pillow-9.4": 1, "pillow-11.0": 1},
 "q17": {"pillow-9.1": 2, "pillow-9.4": 1, "pillow-10.0": 1},
 "q18": {"pillow-8.0": 2, "pillow-9.2": 1},
 "q19": {"pillow-10.2": 2},
 "q20": {"pillow-8.3": 2},
 "q21": {"pillow-8.3": 2, "pillow-10.1": 1, "pillow-5.3": 1},
 "q22": {"pillow-5.0": 2, "pillow-4.2": 1, "pillow-8.0": 1, "pillow-10.0": 1},
 "q23": {"pillow-9.1": 2, "pillow-9.4": 1, "pillow-9.5": 1},
 "q24": {"pillow-6.1": 2},
 "q25": {"pillow-8.2": 2},
 "q26": {"pillow-10.0": 2, "pillow-10.2": 2},
 "q27": {"pillow-7.0": 2},
 "q28": {"pillow-6.2": 2, "pillow-8.0": 1},
 "q29": {"pillow-6.2": 2, "pillow-6.1": 1},
 "q30": {"pillow-2.7": 2, "pillow-4.3": 1},
 "q31": {"pillow-6.0": 2},
 "q32": {"pillow-10.1": 2, "pillow-8.3": 1},
 "q33": {"pillow-9.0": 2, "pillow-7.2": 1, "pillow-10.2": 1},
 "q34": {"pillow-8.2": 2, "pillow-10.0": 1},
 "q35": {"pillow-6.0": 2, "pillow-4.3": 1},
 "q36": {"pillow-8.0": 2, "pillow-3.0": 1, "pillow-4.2": 1},
}
# state query -> superseded notes (current = the query's single grade-2 note)
S = {
 "q01": ["pillow-9.4", "pillow-9.1", "pillow-2.7"],
 "q02": ["pillow-9.0", "pillow-8.0", "pillow-7.0", "pillow-6.0", "pillow-5.0", "pillow-4.0"],
 "q03": ["pillow-7.1", "pillow-7.0", "pillow-5.2"],
 "q04": ["pillow-6.1", "pillow-4.1"],
 "q05": ["pillow-9.2"],
 "q06": ["pillow-9.2", "pillow-7.0", "pillow-6.0"],
 "q07": ["pillow-8.3", "pillow-7.0"],
 "q08": ["pillow-10.2", "pillow-9.0"],
 "q09": ["pillow-3.4"],
 "q10": ["pillow-9.0", "pillow-8.1"],
}

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
