"""Score the encoder runs, the shipped typer and their ensembles on the same folds.

Reads $OUT/typer_probs.json (typer_probs.py) and $OUT/ftc<TAG>_fold*.json (finetune_cues.py)
for each TAG given, and prints (with a cues-only logistic regression as reference), pooled over the 5 folds (810 old units) and per fold, macro-F1
(nine types), accuracy and per-type F1 for: the typer, each encoder run, and each encoder
averaged with the typer with a FIXED weight 0.5 (mean of probabilities, and mean of
log-probabilities), never tuned on the held-out folds. A weight sweep is printed last, labelled
optimistic (it is chosen on the held-out folds). Rows the rules do not type are NOISE.
Also a paired bootstrap (1,000 resamples of the 810 units) of each ensemble minus the typer.

    OUT=/tmp/ft python ensemble.py _cues _plain [_prev]
"""
import glob
import json
import os
import random
import sys

import numpy as np

from common import CLASSES, load, score

OUT = os.environ.get("OUT", "/tmp/ft")
R = load()
ev = [r for r in R if r["old"]]
tp = json.load(open(os.path.join(OUT, "typer_probs.json")))
typer = dict(zip(tp["ids"], map(np.array, tp["probs"])))
typer.update((r["id"], None) for r in ev if not r["usable"])  # every fold ran: NOISE rows covered
runs = {}
for tag in sys.argv[1:]:
    runs[tag] = {}
    for fn in sorted(glob.glob(os.path.join(OUT, f"ftc{tag}_fold*.json"))):
        d = json.load(open(fn))
        runs[tag].update((i, np.array(p) if u else None) for i, p, u in zip(d["ids"], d["probs"], d["usable"]))
        print(f"{tag} fold {d['fold']}: {d['secs']:.0f}s, ntrain {d['ntrain']}")


def predict(probs):
    """Arg-max over the models' probabilities; None if any model lacks the unit (fold not run)."""
    out = {}
    for r in ev:
        if not all(r["id"] in p for p, _ in probs):
            continue
        if not r["usable"]:
            out[r["id"]] = "NOISE"
        else:
            out[r["id"]] = CLASSES[int(np.argmax(sum(w * p[r["id"]] for p, w in probs)))]
    return out


def logp(p):
    return {k: None if v is None else np.log(np.clip(v, 1e-9, 1)) for k, v in p.items()}


def report(name, pred):
    rows = [r for r in ev if r["id"] in pred]
    s = score([r["gold"] for r in rows], [pred[r["id"]] for r in rows])
    folds = sorted({r["fold"] for r in rows})
    per_fold = [score([r["gold"] for r in rows if r["fold"] == f],
                      [pred[r["id"]] for r in rows if r["fold"] == f])["macroF1"] for f in folds]
    print(f"\n{name}: pooled macro-F1 {s['macroF1']:.3f} acc {s['acc']:.3f} n {s['n']} folds {folds}")
    print("  per fold", per_fold, " mean %.3f" % np.mean(per_fold))
    print("  per type", {k: float(v) for k, v in s["per"].items()})
    return s


def boot(name, a, b):
    ids = [r["id"] for r in ev if r["id"] in a and r["id"] in b]
    gold = {r["id"]: r["gold"] for r in ev}
    rng = random.Random(0); d = []
    for _ in range(1000):
        s = [ids[rng.randrange(len(ids))] for _ in ids]
        g = [gold[i] for i in s]
        d.append(score(g, [a[i] for i in s])["macroF1"] - score(g, [b[i] for i in s])["macroF1"])
    print(f"  {name} minus typer: 95% interval", np.percentile(d, [2.5, 50, 97.5]).round(3))


def cues_only():
    """Reference: logistic regression on the 19 cue features alone (no words), same folds."""
    from sklearn.linear_model import LogisticRegression
    dump = {}
    for name in ("train.jsonl", "sentences.jsonl"):
        for line in open(os.path.join(os.environ.get("CACHE", "/tmp/tcache"), name)):
            d = json.loads(line); dump[d["id"]] = d

    def cv(r):
        d, v = dump[r["id"]], np.zeros(19)
        if d.get("matched"):
            v[:9] = np.log1p(d["rule_scores"]); v[9 + CLASSES.index(d["rule_type"])] = 1
        return v
    out = {}
    for f in range(5):
        tr = [r for r in R if r["fold"] != f and r["usable"]]
        m = LogisticRegression(C=1, class_weight="balanced", max_iter=3000)
        m.fit([cv(r) for r in tr], [r["gold"] for r in tr])
        for r in ev:
            if r["fold"] == f:
                out[r["id"]] = m.predict([cv(r)])[0] if r["usable"] else "NOISE"
    return out


report("cues only (ln(1+rule_scores) + rule-type one-hot), logistic regression", cues_only())
base = predict([(typer, 1.0)])
report("shipped typer (D=32768, C=0.3, balanced, generated 0.6)", base)
for tag, p in runs.items():
    report(f"encoder {tag}", predict([(p, 1.0)]))
    for kind, a, b in (("probs", typer, p), ("log-probs", logp(typer), logp(p))):
        e = predict([(a, 0.5), (b, 0.5)])
        report(f"typer + encoder {tag}, mean of {kind}, fixed weight 0.5", e)
        boot(f"ensemble {tag} {kind}", e, base)
if len(runs) > 1:
    tags = list(runs)
    report("typer + " + " + ".join(tags) + ", mean of probs (equal weights)",
           predict([(typer, 1 / (1 + len(tags)))] + [(runs[t], 1 / (1 + len(tags))) for t in tags]))
print("\nOPTIMISTIC (weight on the encoder chosen on the held-out folds themselves), mean of probs:")
for tag, p in runs.items():
    sweep = []
    for w in np.arange(0, 1.01, 0.1):
        e = predict([(typer, 1 - w), (p, w)])
        rows = [r for r in ev if r["id"] in e]
        sweep.append((round(float(w), 1), score([r["gold"] for r in rows], [e[r["id"]] for r in rows])["macroF1"]))
    print(f"  {tag}:", sweep)
