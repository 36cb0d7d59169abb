#!/usr/bin/env python3
"""Train the learned typer of the extractor (ontology/typer.toml).

A multinomial logistic regression over hashed word unigrams and bigrams of a
unit, the words of its section heading, structural signals and the rule
classifier's per-type scores (see operators/src/ontology/typer.rs, which
computes the same features and the arg-max in Rust).

Usage (venv python: ~/.cache/epigraph/venv/bin/python, needs numpy and
scikit-learn, see deploy/local/python.sh):

    export CARGO_TARGET_DIR=/root/.cache/epigraph/target
    cargo build --workspace --bins
    epigraph gen /tmp/gtrain --seed 11 --scale 2000     # optional generated sample
    python eval/extraction/train_typer.py --generated /tmp/gtrain          # CV + export
    python eval/extraction/train_typer.py --generated /tmp/gtrain --cv-only

Training data: eval/extraction/real/train.jsonl (all) and the *dev* split of
eval/extraction/real/sentences.jsonl, optionally plus a sample of a generated
corpus. The *test* split and eval/extraction/real/fresh.jsonl are never read.

The binary writes what the typer reads about each labelled unit (the
extractor's own unit overlapping it, its section, form, source kind, the rule
scores and type, and the feature strings) when EPIGRAPH_TYPER_FEATURES is set.
This script recomputes the feature strings in Python and stops if they differ
from Rust's; hashing is FNV-1a 64 of the feature string, modulo the dimension.

Model selection: 5-fold cross-validation grouped by source (a PEP or Slack
day never sits in both the training and validation fold), scored by the
macro-F1 over the nine types as `epigraph eval extraction` counts it (a unit
the rules call noise, or that no extracted unit overlaps, is NOISE).

Outputs: ontology/typer.toml (the weights) and
operators/src/extract/typer_fixtures.json (a handful of units with the
probabilities Python computes from the exported weights, and FNV vectors,
which the Rust unit tests compare against).
"""
import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from datetime import date

import numpy as np
from scipy import sparse
from sklearn.linear_model import LogisticRegression

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
NINE = ["DECISION", "CONSTRAINT", "EVIDENCE", "NARRATIVE", "PLAN",
        "EVALUATION", "OBSERVATION", "HYPOTHESIS", "QUESTION"]
CLASSES = NINE + ["NOISE"]
OPENERS = ["must", "should", "shall", "may", "might", "could", "would", "will",
           "can", "do", "don", "use", "avoid", "always", "never", "please",
           "let", "make", "add", "remove", "consider", "note", "see", "if"]
MASK = (1 << 64) - 1


def fnv1a64(s):
    h = 0xcbf29ce484222325
    for b in s.encode("utf-8"):
        h ^= b
        h = (h * 0x100000001b3) & MASK
    return h


def words(text):
    out = []
    for m in re.findall(rb"[A-Za-z0-9]+", text.encode("utf-8")):
        w = m.decode("ascii").lower()
        out.append(re.sub(r"[0-9]", "0", w))
    return out


def feature_strings(text, section, kind, form, rule_scores, rule_type):
    out = []
    w = words(text)
    out += ["w:" + x for x in w]
    prev = "^"
    for x in w:
        out.append("b:%s %s" % (prev, x))
        prev = x
    if w:
        out.append("b:%s $" % prev)
    out += ["s:" + x for x in words(section or "")]
    t = text.strip()
    if t.endswith("?"):
        out.append("x:question_mark")
    elif "?" in t:
        out.append("x:inner_question_mark")
    if re.search(r"[0-9]", t):
        out.append("x:digit")
    if "%" in t:
        out.append("x:percent")
    if "http://" in t or "https://" in t:
        out.append("x:url")
    if t.startswith("("):
        out.append("x:parenthesised")
    if t.startswith(".."):
        out.append("x:directive")
    if w and w[0] in OPENERS:
        out.append("x:first:" + w[0])
    n = len(w)
    length = "short" if n <= 3 else "medium" if n <= 10 else "long" if n <= 25 else "very_long"
    out.append("x:length:" + length)
    out.append("x:kind:" + kind)
    out.append("x:form:" + form)
    if all(s == 0 for s in rule_scores):
        out.append("r:none")
    out.append("r:" + rule_type)
    return sorted(set(out))


def dump(binary, args, env_extra, cache=None):
    if cache and os.path.exists(cache):
        return [json.loads(l) for l in open(cache, encoding="utf-8")]
    with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as fh:
        path = fh.name
    env = dict(os.environ, EPIGRAPH_TYPER_FEATURES=path, **env_extra)
    subprocess.run([binary, "eval", "extraction"] + args, env=env, check=True,
                   stdout=subprocess.DEVNULL, cwd=REPO)
    rows = [json.loads(l) for l in open(path, encoding="utf-8")]
    if cache:
        os.replace(path, cache)
    else:
        os.unlink(path)
    return rows


def check_features(rows):
    bad = 0
    for r in rows:
        if not r["matched"]:
            continue
        # The rules' type feeds the features; a unit the rules call noise is fed as NARRATIVE.
        rt = r["rule_type"] if r["rule_type"] != "NOISE" else "NARRATIVE"
        py = feature_strings(r["text"], r["section"], r["kind"], r["form"],
                             r["rule_scores"], rt)
        if py != r["features"]:
            bad += 1
            if bad <= 3:
                print("feature mismatch on", r["id"], set(py) ^ set(r["features"]),
                      file=sys.stderr)
    if bad:
        sys.exit("%d units: Python features differ from Rust's" % bad)


def design(rows, dim):
    indptr, indices = [0], []
    for r in rows:
        idx = sorted({fnv1a64(f) % dim for f in r["features"]})
        indices += idx
        indptr.append(len(indices))
    hashed = sparse.csr_matrix((np.ones(len(indices)), indices, indptr),
                               shape=(len(rows), dim))
    dense = np.array([[math.log1p(s) for s in r["rule_scores"]] for r in rows])
    return sparse.hstack([hashed, sparse.csr_matrix(dense)]).tocsr()


def macro_f1(gold, pred, classes=NINE):
    f1s = []
    per = {}
    for c in classes:
        tp = sum(1 for g, p in zip(gold, pred) if g == c and p == c)
        fp = sum(1 for g, p in zip(gold, pred) if g != c and p == c)
        fn = sum(1 for g, p in zip(gold, pred) if g == c and p != c)
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        per[c] = (p, r, f, tp + fn)
        f1s.append(f)
    return sum(f1s) / len(f1s), per


def usable(r):
    """Units the typer sees at inference: matched, and typed (not noise) by the rules."""
    return r["matched"] and r["rule_type"] != "NOISE"


def fit(rows, dim, c, class_weight, weights=None):
    model = LogisticRegression(C=c, class_weight=class_weight, max_iter=3000, tol=1e-6)
    model.fit(design(rows, dim), [r["gold"] for r in rows], sample_weight=weights)
    return model


def predict_final(model, rows, dim):
    """As the extractor: NOISE unless matched and typed by the rules, else the model's arg-max."""
    out = ["NOISE"] * len(rows)
    idx = [i for i, r in enumerate(rows) if usable(r)]
    if idx:
        pred = model.predict(design([rows[i] for i in idx], dim))
        for i, p in zip(idx, pred):
            out[i] = p
    return out


def folds_by_source(rows, k, seed=7):
    sources = sorted({r["source"] for r in rows})
    random.Random(seed).shuffle(sources)
    fold_of = {s: i % k for i, s in enumerate(sources)}
    return [fold_of[r["source"]] for r in rows]


def cross_validate(real, gen, dim, c, cw, gen_weight, k=5):
    fold = folds_by_source(real, k)
    gold, pred = [], []
    for f in range(k):
        tr = [r for r, g in zip(real, fold) if g != f and usable(r)]
        va = [r for r, g in zip(real, fold) if g == f]
        weights = [1.0] * len(tr)
        if gen and gen_weight > 0:
            tr = tr + gen
            weights += [gen_weight] * len(gen)
        model = fit(tr, dim, c, cw, weights)
        gold += [r["gold"] for r in va]
        pred += predict_final(model, va, dim)
    return macro_f1(gold, pred)[0]


def export(model, dim, c, cw, gen_weight, n_train, path):
    classes = list(model.classes_)
    coef = model.coef_  # (classes, dim + 9)
    bias = model.intercept_
    rnd = lambda x: float("%.5g" % x)
    lines = [
        "# The learned typer of the extractor: a multinomial logistic regression over hashed",
        "# words, bigrams, section words, structural signals and the rule scores of a unit.",
        "# Written by eval/extraction/train_typer.py; do not edit by hand. Remove this file, or",
        "# override it with `[typer] enabled = false`, to type units by the rules alone.",
        "# Trained on %d units (train.jsonl, the dev split of sentences.jsonl%s);"
        % (n_train, ", a generated sample" if gen_weight > 0 else ""),
        "# C = %g, class_weight = %s, generated weight = %g." % (c, cw, gen_weight),
        "[typer]",
        "model = %s" % json.dumps("logreg-hash-%d-n%d/%s" % (dim, n_train, date.today())),
        "dim = %d" % dim,
        "classes = %s" % json.dumps(classes),
        "bias = [%s]" % ", ".join(repr(rnd(b)) for b in bias),
        "rule = [",
    ]
    for t in range(9):
        lines.append("  [%s]," % ", ".join(repr(rnd(w)) for w in coef[:, dim + t]))
    lines.append("]")
    lines.append("rows = [")
    kept = 0
    for i in range(dim):
        w = coef[:, i]
        if np.max(np.abs(w)) < 5e-4:
            continue
        kept += 1
        lines.append('  "%d %s",' % (i, " ".join(repr(rnd(x)) for x in w)))
    lines.append("]")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    print("wrote %s: %d of %d hashed rows, %d bytes"
          % (path, kept, dim, os.path.getsize(path)), file=sys.stderr)


def load_exported(path):
    """The weights as Rust reads them (rounded decimals), for the fixture probabilities."""
    text = open(path, encoding="utf-8").read()
    dim = int(re.search(r"^dim = (\d+)", text, re.M).group(1))
    classes = json.loads(re.search(r"^classes = (.*)$", text, re.M).group(1))
    bias = [float(x) for x in re.search(r"^bias = \[(.*)\]$", text, re.M).group(1).split(",")]
    rule_block = re.search(r"^rule = \[\n(.*?)\n\]", text, re.M | re.S).group(1)
    rule = [[float(x) for x in line.strip().strip("[],").split(",")]
            for line in rule_block.splitlines()]
    hashed = np.zeros((dim, len(classes)))
    for m in re.finditer(r'^  "(\d+) ([^"]*)",$', text, re.M):
        hashed[int(m.group(1))] = [float(x) for x in m.group(2).split()]
    return dim, classes, np.array(bias), np.array(rule), hashed


def probabilities(weights, r):
    dim, classes, bias, rule, hashed = weights
    logits = bias.copy()
    for i in sorted({fnv1a64(f) % dim for f in r["features"]}):
        logits += hashed[i]
    for t, s in enumerate(r["rule_scores"]):
        logits += math.log1p(s) * rule[t]
    e = np.exp(logits - logits.max())
    return list(e / e.sum())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", "/root/.cache/epigraph/target"), "debug", "epigraph"))
    ap.add_argument("--fixtures", default=os.path.join(REPO, "..", "shared", "fixtures"))
    ap.add_argument("--generated", help="a generated corpus folder to sample from")
    ap.add_argument("--gen-sample", type=int, default=1500)
    ap.add_argument("--cv-only", action="store_true")
    ap.add_argument("--cache", help="a folder to keep the feature dumps in (reused if present)")
    ap.add_argument("--grid", default="8192:0.3,1,3,10:none,balanced:0,0.3",
                    help="dims:Cs:class_weights:generated_weights, comma-separated lists")
    ap.add_argument("--out", default=os.path.join(REPO, "ontology", "typer.toml"))
    ap.add_argument("--fixture-out", default=os.path.join(
        REPO, "operators", "src", "extract", "typer_fixtures.json"))
    args = ap.parse_args()

    real_dir = os.path.join(HERE, "real")
    fx = ["--fixtures", args.fixtures]
    cache = lambda name: os.path.join(args.cache, name) if args.cache else None
    train = dump(args.bin, [os.path.join(real_dir, "train.jsonl")] + fx, {}, cache("train.jsonl"))
    dev = [r for r in dump(args.bin, [os.path.join(real_dir, "sentences.jsonl")] + fx, {},
                           cache("sentences.jsonl"))
           if r["split"] == "dev"]
    real = train + dev
    gen = []
    if args.generated:
        g = [r for r in dump(args.bin, ["--generated", args.generated], {}, cache("generated.jsonl"))
             if usable(r)]
        random.Random(11).shuffle(g)
        gen = sorted(g[:args.gen_sample], key=lambda r: r["id"])
    for rows in (real, gen):
        check_features(rows)
    print("real units: %d (%d usable), generated sample: %d; Python features == Rust features"
          % (len(real), sum(usable(r) for r in real), len(gen)), file=sys.stderr)
    print("gold types (real):", dict(sorted(Counter(r["gold"] for r in real).items())),
          file=sys.stderr)
    rules_pred = [r["rule_type"] if r["matched"] else "NOISE" for r in real]
    print("rules alone on train+dev (as dumped): macro-F1 %.3f"
          % macro_f1([r["gold"] for r in real], rules_pred)[0], file=sys.stderr)

    dims, cs, cws, gws = [g.split(",") for g in args.grid.split(":")]
    grid = []
    for dim in map(int, dims):
        for c in map(float, cs):
            for cw in [None if x == "none" else x for x in cws]:
                for gw in (map(float, gws) if gen else (0.0,)):
                    score = cross_validate(real, gen, dim, c, cw, gw)
                    grid.append((score, dim, c, cw, gw))
                    print("cv dim=%5d C=%-4g class_weight=%-8s gen_weight=%-3g macro-F1 %.3f"
                          % (dim, c, cw, gw, score), file=sys.stderr)
    grid.sort(key=lambda g: (-g[0], g[1], g[2]))
    best = grid[0]
    print("best:", best, file=sys.stderr)
    if args.cv_only:
        return
    _, dim, c, cw, gw = best
    tr = [r for r in real if usable(r)]
    weights = [1.0] * len(tr)
    if gen and gw > 0:
        tr, weights = tr + gen, weights + [gw] * len(gen)
    model = fit(tr, dim, c, cw, weights)
    export(model, dim, c, cw, gw, len(tr), args.out)

    exported = load_exported(args.out)
    picks = [r for r in real if usable(r)]
    random.Random(3).shuffle(picks)
    units = []
    for r in picks[:8]:
        units.append({
            "id": r["id"], "text": r["text"], "section": r["section"], "kind": r["kind"],
            "form": r["form"], "rule_scores": r["rule_scores"], "rule_type": r["rule_type"],
            "probabilities": probabilities(exported, r),
        })
    hashes = [{"feature": f, "fnv1a64": str(fnv1a64(f)), "index": fnv1a64(f) % dim}
              for f in ["w:must", "b:^ should", "s:open", "x:question_mark", "r:DECISION",
                        "w:caf\u00e9", ""]]
    with open(args.fixture_out, "w", encoding="utf-8") as fh:
        json.dump({"classes": exported[1], "dim": dim, "units": units, "hashes": hashes},
                  fh, indent=1, ensure_ascii=False)
        fh.write("\n")
    print("wrote", args.fixture_out, file=sys.stderr)


if __name__ == "__main__":
    main()
