"""Held-out class probabilities of the shipped typer on the encoder's folds (for ensemble.py).

Reproduces typer_experiments.py's `cv` with the shipped setting (ontology/typer.toml:
hashed features, D = 32,768, C = 0.3, balanced, a 1,500-unit generated sample at weight 0.6),
trained per fold on the usable old + batch-2 units of the other folds, and writes
predict_proba for the usable old units of each held-out fold to $OUT/typer_probs.json
(columns in common.CLASSES order). Needs only numpy/scipy/scikit-learn (the epigraph venv):

    FOLDS=/tmp/ft/data.jsonl OUT=/tmp/ft python typer_probs.py /tmp/tcache
"""
import json
import os
import sys
import time

import numpy as np
from sklearn.linear_model import LogisticRegression

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import train_typer as T  # noqa: E402
import typer_experiments as X  # noqa: E402
from common import CLASSES, load, score  # noqa: E402

DIM, C, GEN_W = 32768, 0.3, 0.6
old, new, gen = X.load(sys.argv[1] if len(sys.argv) > 1 else "/tmp/tcache")
fold = T.folds_by_source(old, 5)
fold_of = {r["source"]: f for r, f in zip(old, fold)}
R = load()
assert all(fold_of.get(r["source"], -1) == r["fold"] for r in R), "folds differ from the folds file"
out = {"ids": [], "probs": [], "fold": [], "secs": []}
gold, pred = [], []
for f in range(5):
    t0 = time.time()
    train = [r for r, g in zip(old, fold) if g != f and T.usable(r)]
    train += [r for r in new if fold_of.get(r["source"], -1) != f and T.usable(r)]
    weights = [1.0] * len(train) + [GEN_W] * len(gen)
    held = [r for r, g in zip(old, fold) if g == f]
    use = [r for r in held if T.usable(r)]
    m = LogisticRegression(C=C, class_weight="balanced", max_iter=3000, tol=1e-6)
    m.fit(T.design(train + gen, DIM), [r["gold"] for r in train + gen], sample_weight=weights)
    P = np.zeros((len(use), len(CLASSES)))
    P[:, [CLASSES.index(c) for c in m.classes_]] = m.predict_proba(T.design(use, DIM))
    out["ids"] += [r["id"] for r in use]
    out["probs"] += P.round(6).tolist()
    out["fold"] += [f] * len(use)
    out["secs"].append(time.time() - t0)
    p = dict(zip((r["id"] for r in use), (CLASSES[k] for k in P.argmax(1))))
    gold += [r["gold"] for r in held]
    pred += [p.get(r["id"], "NOISE") for r in held]
    print("fold %d: %.0fs, %s" % (f, time.time() - t0, score([r["gold"] for r in held],
                                                              [p.get(r["id"], "NOISE") for r in held])["macroF1"]), flush=True)
print("pooled", score(gold, pred), "T.macro_f1 %.4f" % T.macro_f1(gold, pred)[0])
json.dump(out, open(os.path.join(os.environ.get("OUT", "/tmp/ft"), "typer_probs.json"), "w"))
