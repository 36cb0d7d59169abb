#!/usr/bin/env python3
"""Plain BM25 baseline over a BEIR folder; prints one JSON object with the retrieval metrics.

Usage: bm25_baseline.py <beir dir> [--qrels qrels/test.tsv] [--k 100] [--no-stem]

The BEIR folder holds corpus.jsonl ({"_id", "title", "text"}), queries.jsonl ({"_id", "text"}),
qrels/test.tsv (query-id, corpus-id, score; header line) and optionally state.jsonl
({"query_id", "current", "superseded"}). --qrels names another qrels file of the folder (e.g.
qrels/dev.tsv of keps/); only the queries and state pairs of the query ids in it are used (with
the default file that is every query and pair of peps/, keps/ and generated/).

Retrieval: bm25s with its default parameters (Lucene variant, k1=1.5, b=0.75) over
"title + newline + text" of each document; tokens are lowercased \\w\\w+ runs, English
stopwords removed, stemmed with PyStemmer's English (Snowball) stemmer unless --no-stem. Every
document is scored for every query; the ranking is by descending score (ties: corpus order) and
keeps the documents with a positive score, at most --k of them (default 100).

Metrics (the Rust `epigraph eval retrieval` computes the same ones; see README.md):
  relevant        = qrels score > 0; queries without a relevant document are skipped
  ndcg@k          = DCG@k / IDCG@k, DCG@k = sum_{rank i<=k} rel_i / log2(i + 1) (linear gain, i
                    from 1), IDCG@k the same over the query's qrels sorted by descending score
  recall@k        = |relevant in top k| / |relevant|
  map@10          = (sum of precision@i over ranks i<=10 holding a relevant doc) / |relevant|
                    (pytrec_eval map_cut_10)
  each averaged over the evaluated queries;
  state_current_first = fraction of state.jsonl pairs whose current doc ranks strictly above the
                    superseded one (a doc outside the ranking has rank infinity; both missing
                    counts as a failure).
"""
import argparse
import json
import math
import sys
from pathlib import Path


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def read_qrels(path):
    qrels = {}
    with open(path, encoding="utf-8") as f:
        next(f)  # header
        for line in f:
            if line.strip():
                qid, did, score = line.rstrip("\n").split("\t")
                qrels.setdefault(qid, {})[did] = int(score)
    return qrels


def ndcg(ranking, rels, k):
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranking[:k]))
    ideal = sorted((g for g in rels.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall(ranking, relevant, k):
    return len(relevant.intersection(ranking[:k])) / len(relevant)


def map_cut(ranking, relevant, k):
    hits, total = 0, 0.0
    for i, d in enumerate(ranking[:k]):
        if d in relevant:
            hits += 1
            total += hits / (i + 1)
    return total / len(relevant)


def evaluate(rankings, qrels, state, system):
    """Metrics for {query id: [doc id, ...]} against the qrels and the state pairs."""
    sums = {m: 0.0 for m in ("ndcg@1", "ndcg@5", "ndcg@10", "recall@5", "recall@10",
                             "recall@100", "map@10")}
    n = 0
    for qid, rels in sorted(qrels.items()):
        relevant = {d for d, g in rels.items() if g > 0}
        if not relevant:
            continue
        n += 1
        ranking = rankings.get(qid, [])
        for k in (1, 5, 10):
            sums[f"ndcg@{k}"] += ndcg(ranking, rels, k)
        for k in (5, 10, 100):
            sums[f"recall@{k}"] += recall(ranking, relevant, k)
        sums["map@10"] += map_cut(ranking, relevant, 10)
    wins = 0
    for pair in state:
        ranking = rankings.get(pair["query_id"], [])[:100]
        pos = {d: i for i, d in enumerate(ranking)}
        current = pos.get(pair["current"], math.inf)
        superseded = pos.get(pair["superseded"], math.inf)
        wins += current < superseded
    out = {"system": system, "queries": n}
    out.update({m: round(v / n, 4) if n else 0.0 for m, v in sums.items()})
    out["state_pairs"] = len(state)
    out["state_current_first"] = round(wins / len(state), 4) if state else 0.0
    return out


def make_stemmer(stem):
    """PyStemmer's English (Snowball) stemmer, or None when not stemming."""
    if not stem:
        return None
    import Stemmer

    return Stemmer.Stemmer("english")


def tokenize(texts, stemmer, return_ids=True):
    """The baseline's tokens: lowercased \\w\\w+ runs, English stopwords out, stemmed."""
    import bm25s

    return bm25s.tokenize(texts, lower=True, stopwords="en", stemmer=stemmer,
                          return_ids=return_ids, show_progress=False)


def bm25_rankings(corpus, queries, depth, stem):
    import bm25s

    stemmer = make_stemmer(stem)
    ids = [d["_id"] for d in corpus]
    texts = [(d.get("title") or "") + "\n" + (d.get("text") or "") for d in corpus]
    tokens = tokenize(texts, stemmer)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    query_tokens = tokenize([q["text"] for q in queries], stemmer, return_ids=False)
    rankings = {}
    for q, toks in zip(queries, query_tokens):
        scores = retriever.get_scores(toks) if toks else [0.0] * len(ids)
        order = sorted(range(len(ids)), key=lambda i: (-float(scores[i]), i))
        rankings[q["_id"]] = [ids[i] for i in order if scores[i] > 0][:depth]
    return rankings


def read_split(d, qrels_path=None):
    """(corpus, queries, qrels, state) of a BEIR folder, for the queries of one qrels file.

    qrels_path (relative to d) defaults to qrels/test.tsv. Only the queries and state pairs whose
    query id is in that file are kept, so the queries of another split are never asked.
    """
    corpus = read_jsonl(d / "corpus.jsonl")
    qrels = read_qrels(d / (qrels_path or Path("qrels") / "test.tsv"))
    queries = [q for q in read_jsonl(d / "queries.jsonl") if q["_id"] in qrels]
    state = read_jsonl(d / "state.jsonl") if (d / "state.jsonl").exists() else []
    state = [p for p in state if p["query_id"] in qrels]
    return corpus, queries, qrels, state


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("beir_dir", type=Path)
    ap.add_argument("--k", type=int, default=100,
                    help="results kept per query (metrics at a larger cutoff see only these)")
    ap.add_argument("--no-stem", action="store_true", help="do not stem (no PyStemmer)")
    ap.add_argument("--qrels", type=Path, default=Path("qrels/test.tsv"),
                    help="qrels file relative to the folder (default qrels/test.tsv); only its "
                    "queries and their state pairs are used")
    args = ap.parse_args()
    corpus, queries, qrels, state = read_split(args.beir_dir, args.qrels)
    rankings = bm25_rankings(corpus, queries, args.k, stem=not args.no_stem)
    system = "bm25s-nostem" if args.no_stem else "bm25s"
    json.dump(evaluate(rankings, qrels, state, system), sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
