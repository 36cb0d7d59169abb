#!/usr/bin/env python3
"""Experiments behind docs/extraction.md, "Learned typer retrained on three times the real text".

Scores variants of the learned typer by 5-fold cross-validation grouped by source, on the 810
*old* real units only (train.jsonl without "batch": 2, plus the dev split of sentences.jsonl),
so that adding the 1,646 batch-2 units to training can be compared like with like: a batch-2
unit joins training only when its source is not in the validation fold. Never reads the test
split or fresh.jsonl.

Usage (venv python, numpy, scipy, scikit-learn, tokenizers):

    python eval/extraction/train_typer.py --generated /tmp/gtrain --cache /tmp/tcache --cv-only
    python eval/extraction/typer_experiments.py --cache /tmp/tcache [--only NAME ...]

The first command writes the typer's inputs (the feature dumps) into the cache folder. Variants:

    shipped         the shipped features (hashed words, bigrams, section, flags, rule scores)
    static          + the static table's sentence vector (the model's distilled token table)
    transformer     + MiniLM's sentence vector (a numpy forward pass of the bundled model)
    tfidf           TF-IDF word 1-2-grams + section words + rule scores (no hashing)
    tfidf_char      + char 2-5-grams, logistic regression and linear SVM
"""
import argparse
import json
import math
import os
import random
import struct
import sys

import numpy as np
from scipy import sparse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import train_typer as T  # noqa: E402

MODEL = os.path.expanduser("~/.cache/epigraph/models/all-MiniLM-L6-v2/")


def load(cache):
    rows = [json.loads(l) for l in open(os.path.join(cache, "train.jsonl"), encoding="utf-8")]
    batch2 = set()
    for line in open(os.path.join(HERE, "real", "train.jsonl"), encoding="utf-8"):
        r = json.loads(line)
        if r.get("batch") == 2:
            batch2.add(r["id"])
    dev = [r for r in map(json.loads, open(os.path.join(cache, "sentences.jsonl"), encoding="utf-8"))
           if r["split"] == "dev"]
    old = [r for r in rows if r["id"] not in batch2] + dev
    new = [r for r in rows if r["id"] in batch2]
    gen = [r for r in map(json.loads, open(os.path.join(cache, "generated.jsonl"), encoding="utf-8"))
           if T.usable(r)]
    random.Random(11).shuffle(gen)
    return old, new, sorted(gen[:1500], key=lambda r: r["id"])


def static_embedder():
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(MODEL + "tokenizer.json")
    tok.no_padding()
    tok.no_truncation()
    raw = open(MODEL + "static-v2.f32", "rb").read()
    n, d = struct.unpack("<II", raw[8:16])
    table = np.frombuffer(raw[16:], dtype="<f4").reshape(n, d)
    vocab = tok.get_vocab_size(True)
    first = tok.token_to_id("the")
    special = {tok.token_to_id(t) for t in ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]}
    harmonic = math.log(vocab) + 0.5772

    def zipf(rank):
        p = 1.0 / ((rank + 1.0) * harmonic)
        return 1e-4 / (1e-4 + p)
    weights = np.array([0.0 if i in special else zipf(500 if i < first else i - first)
                        for i in range(vocab)], dtype=np.float32)

    def embed(text):
        s = np.zeros(d, dtype=np.float32)
        for i in tok.encode(text, add_special_tokens=False).ids:
            s += weights[i] * table[i]
        norm = np.linalg.norm(s)
        if norm > 1e-12:
            return s / norm
        s[0] = 1.0
        return s
    return embed


def transformer_embedder():
    """MiniLM-L6's mean-pooled, normalised sentence vector, in numpy (no torch needed)."""
    from scipy.special import erf
    from tokenizers import Tokenizer
    raw = open(MODEL + "model.safetensors", "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    P = {}
    for k, v in header.items():
        if k == "__metadata__":
            continue
        a, b = v["data_offsets"]
        P[k.replace("bert.", "")] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=dtypes[v["dtype"]]) \
            .reshape(v["shape"]).astype(np.float32)
    tok = Tokenizer.from_file(MODEL + "tokenizer.json")
    tok.no_padding()
    tok.enable_truncation(256)

    def norm(x, p):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + 1e-12) * P[p + ".weight"] + P[p + ".bias"]

    def lin(x, p):
        return x @ P[p + ".weight"].T + P[p + ".bias"]

    def embed(text):
        ids = np.array(tok.encode(text).ids)
        L = len(ids)
        x = (P["embeddings.word_embeddings.weight"][ids] + P["embeddings.position_embeddings.weight"][:L]
             + P["embeddings.token_type_embeddings.weight"][0])
        x = norm(x, "embeddings.LayerNorm")
        for i in range(6):
            p = "encoder.layer.%d." % i
            q, k, v = (lin(x, p + "attention.self." + w).reshape(L, 12, 32).transpose(1, 0, 2)
                       for w in ("query", "key", "value"))
            a = q @ k.transpose(0, 2, 1) / np.sqrt(32)
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            c = (a @ v).transpose(1, 0, 2).reshape(L, 384)
            x = norm(lin(c, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            h = lin(x, p + "intermediate.dense")
            h = 0.5 * h * (1 + erf(h / np.sqrt(2)))
            x = norm(lin(h, p + "output.dense") + x, p + "output.LayerNorm")
        e = x.mean(0)
        return e / np.linalg.norm(e)
    return embed


def cv(old, new, gen, fit_predict, k=5):
    """Macro-F1 (nine types) of `fit_predict(train_rows, weights, eval_rows)` on the old units."""
    fold = T.folds_by_source(old, k)
    fold_of = {r["source"]: f for r, f in zip(old, fold)}
    gold, pred = [], []
    for f in range(k):
        train = [r for r, g in zip(old, fold) if g != f and T.usable(r)]
        train += [r for r in new if fold_of.get(r["source"], -1) != f and T.usable(r)]
        weights = [1.0] * len(train) + [0.6] * len(gen)
        held = [r for r, g in zip(old, fold) if g == f]
        usable = [r for r in held if T.usable(r)]
        predicted = dict(zip((r["id"] for r in usable), fit_predict(train + gen, weights, usable)))
        gold += [r["gold"] for r in held]
        pred += [predicted.get(r["id"], "NOISE") for r in held]
    return T.macro_f1(gold, pred)[0]


def hashed(dim, c, dense=None, alpha=1.0):
    def fit_predict(train, weights, held):
        def design(rows):
            x = T.design(rows, dim)
            if dense is None:
                return x
            return sparse.hstack([x, sparse.csr_matrix(np.array([dense(r["text"]) for r in rows]) * alpha)]).tocsr()
        from sklearn.linear_model import LogisticRegression
        model = LogisticRegression(C=c, class_weight="balanced", max_iter=3000, tol=1e-6)
        model.fit(design(train), [r["gold"] for r in train], sample_weight=weights)
        return model.predict(design(held))
    return fit_predict


def tfidf(char=False, svm=False):
    def fit_predict(train, weights, held):
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.svm import LinearSVC
        vecs = [(TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True), "text"),
                (TfidfVectorizer(), "section")]
        if char:
            vecs.append((TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True, min_df=2), "text"))
        rules = lambda rows: sparse.csr_matrix([[math.log1p(s) for s in r["rule_scores"]] for r in rows])
        xt = sparse.hstack([v.fit_transform([r.get(f) or "" for r in train]) for v, f in vecs] + [rules(train)]).tocsr()
        xh = sparse.hstack([v.transform([r.get(f) or "" for r in held]) for v, f in vecs] + [rules(held)]).tocsr()
        model = LinearSVC(C=0.3, class_weight="balanced") if svm else \
            LogisticRegression(C=10 if char else 1, class_weight="balanced", max_iter=3000)
        model.fit(xt, [r["gold"] for r in train], sample_weight=weights)
        return model.predict(xh)
    return fit_predict


def export_folds(old, new, path):
    """The units with their labels, section, text, fold and whether the typer sees them."""
    labelled = {}
    for name in ("train.jsonl", "sentences.jsonl"):
        for line in open(os.path.join(HERE, "real", name), encoding="utf-8"):
            r = json.loads(line)
            if r["split"] in ("train", "dev"):
                labelled[r["id"]] = r
    fold = T.folds_by_source(old, 5)
    fold_of = {r["source"]: f for r, f in zip(old, fold)}
    with open(path, "w", encoding="utf-8") as out:
        for r, is_old in [(r, True) for r in old] + [(r, False) for r in new]:
            unit = labelled[r["id"]]
            out.write(json.dumps({
                "id": r["id"], "source": r["source"], "section": unit["section"],
                "text": unit["text"], "gold": unit["type"], "old": is_old,
                "fold": fold_of.get(r["source"], -1), "usable": T.usable(r)}) + "\n")
    print("wrote %s: %d units" % (path, len(old) + len(new)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", required=True)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--export-folds", metavar="FILE",
                    help="write the old and batch-2 units with their fold (for encoder/) and stop")
    args = ap.parse_args()
    old, new, gen = load(args.cache)
    if args.export_folds:
        export_folds(old, new, args.export_folds)
        return
    print("old units %d, batch-2 units %d, generated %d" % (len(old), len(new), len(gen)))
    memo = {}

    def cached(embed):
        def f(text):
            if text not in memo:
                memo[text] = embed(text)
            return memo[text]
        return f
    variants = {
        "shipped": lambda: [("D=8192 C=0.3", hashed(8192, 0.3)), ("D=32768 C=0.3", hashed(32768, 0.3))],
        "static": lambda: [("+ static vector", hashed(8192, 0.3, cached(static_embedder())))],
        "transformer": lambda: [("+ transformer vector x%g" % a, hashed(8192, 0.3, tv, a))
                                for tv in [cached(transformer_embedder())] for a in (1, 3)],
        "tfidf": lambda: [("tfidf words + section + rules", tfidf())],
        "tfidf_char": lambda: [("+ char n-grams, LR", tfidf(char=True)),
                               ("+ char n-grams, linear SVM", tfidf(char=True, svm=True))],
    }
    for name, make in variants.items():
        if args.only and name not in args.only:
            continue
        memo.clear()
        for label, fit_predict in make():
            print("%-34s old only %.3f   + batch 2 %.3f" % (
                label, cv(old, [], gen, fit_predict), cv(old, new, gen, fit_predict)), flush=True)


if __name__ == "__main__":
    main()
