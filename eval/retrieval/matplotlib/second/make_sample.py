#!/usr/bin/env python3
"""Write second/sample.json (run from the repo root): the second judge's sample.

Method: rng = random.Random(1207); per kind, in the order state, origin, lookup, paraphrase,
process, rng.sample(sorted ids of that kind, k) with k = 4, 2, 2, 2, 2 (12 queries). For each
sampled query (in that order), the candidates are the documents the first judge graded plus
3 ungraded ones drawn with rng.sample(sorted ungraded ids, 3), listed in release order. The
first judge's scores are not written.
"""
import json
import random
from pathlib import Path

D = Path("eval/retrieval/matplotlib")
SEED = 1207
PER_KIND = [("state", 4), ("origin", 2), ("lookup", 2), ("paraphrase", 2), ("process", 2)]

corpus = [json.loads(l)["_id"] for l in (D / "corpus.jsonl").open(encoding="utf-8")]
order = {d: i for i, d in enumerate(corpus)}
queries = [json.loads(l) for l in (D / "queries.jsonl").open(encoding="utf-8")]
graded = {}
for line in (D / "qrels/test.tsv").read_text().splitlines()[1:]:
    q, d, _ = line.split("\t")
    graded.setdefault(q, set()).add(d)
rng = random.Random(SEED)
picked = []
for kind, k in PER_KIND:
    ids = sorted(q["_id"] for q in queries if q["metadata"]["kind"] == kind)
    picked += rng.sample(ids, k)
text = {q["_id"]: q["text"] for q in queries}
out = []
for q in picked:
    decoys = rng.sample(sorted(set(corpus) - graded[q]), 3)
    cands = sorted(graded[q] | set(decoys), key=order.get)
    out.append({"query_id": q, "text": text[q], "candidates": cands})
about = ("Second-judge sample for eval/retrieval/matplotlib: 12 queries (random.Random(1207), "
         "per kind 4 state, 2 origin, 2 lookup, 2 paraphrase, 2 process) and, for each, the corpus "
         "ids to grade (0 = not relevant, 1 = same topic and answers part of it, or gives an answer "
         "that a later note in this corpus has since superseded, 2 = answers the query; for a "
         "question about the current state, the newest note that settles it is 2 and older notes "
         "that state the earlier situation are 1; for a question about when something began, the "
         "note that introduced it is 2). The first judge's scores are deliberately not included; "
         "each candidate list mixes the documents the first judge graded with 3 ungraded ones, in "
         "release order. The judge may also grade any other corpus document it finds relevant.")
(D / "second/sample.json").write_text(json.dumps({"about": about, "seed": SEED, "queries": out}, indent=1, ensure_ascii=False) + "\n")
print("sample:", " ".join(picked))
