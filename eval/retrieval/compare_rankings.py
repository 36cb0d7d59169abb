#!/usr/bin/env python3
"""Per-query comparison of two systems' rankings on a BEIR folder, for error analysis.

    compare_rankings.py <beir dir> A.json:system B.json:system [--qrels qrels/test.tsv]

Each JSON file is {system: {query_id: [doc ids, best first]}} as written by
`epigraph eval retrieval --rankings-out` or `chunk_hybrid_baseline.py --rankings-out`. Prints,
per query where the two differ in nDCG@10, both values, the query's kind and text, where each
system put the relevant documents (grade in brackets) and each system's top 3. Stdlib only;
nDCG is `bm25_baseline.py`'s (linear gain).
"""

import argparse
import json
import math
from pathlib import Path


def ndcg(ranking, rels, k=10):
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranking[:k]))
    ideal = sorted((r for r in rels.values() if r > 0), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("beir_dir", type=Path)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--qrels", default="qrels/test.tsv")
    args = ap.parse_args()
    queries = {}
    for line in (args.beir_dir / "queries.jsonl").read_text().splitlines():
        if line.strip():
            q = json.loads(line)
            queries[q["_id"]] = (q.get("metadata", {}).get("kind", ""), q["text"])
    qrels = {}
    for n, line in enumerate((args.beir_dir / args.qrels).read_text().splitlines()):
        fields = line.split("\t")
        if n == 0 and fields[0] == "query-id" or len(fields) != 3:
            continue
        qrels.setdefault(fields[0], {})[fields[1]] = int(fields[2])

    def load(spec):
        path, system = spec.rsplit(":", 1)
        return system, json.loads(Path(path).read_text())[system]

    (na, ra), (nb, rb) = load(args.a), load(args.b)
    rows = []
    for qid, rels in sorted(qrels.items()):
        if qid not in queries or not any(r > 0 for r in rels.values()):
            continue
        a, b = ra.get(qid, []), rb.get(qid, [])
        rows.append((ndcg(a, rels) - ndcg(b, rels), qid, a, b, rels))
    total_a = sum(ndcg(a, rels) for _, _, a, _, rels in rows) / max(len(rows), 1)
    total_b = sum(ndcg(b, rels) for _, _, _, b, rels in rows) / max(len(rows), 1)
    print(f"{len(rows)} queries; nDCG@10 {na} {total_a:.4f}, {nb} {total_b:.4f}")
    print(f"{na} ahead on {sum(1 for r in rows if r[0] > 1e-9)}, behind on "
          f"{sum(1 for r in rows if r[0] < -1e-9)}")
    for diff, qid, a, b, rels in sorted(rows):
        if abs(diff) < 1e-9:
            continue
        kind, text = queries[qid]
        print(f"\n{qid} [{kind}] {na} {ndcg(a, rels):.3f} vs {nb} {ndcg(b, rels):.3f}: {text}")
        for doc, grade in sorted(rels.items(), key=lambda x: -x[1]):
            pa = a.index(doc) + 1 if doc in a else None
            pb = b.index(doc) + 1 if doc in b else None
            print(f"   [{grade}] {doc}: {na} #{pa}, {nb} #{pb}")
        print(f"   {na} top 3: {a[:3]}")
        print(f"   {nb} top 3: {b[:3]}")


if __name__ == "__main__":
    main()
