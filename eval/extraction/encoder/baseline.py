import sys, json, os
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from common import *
R = load()
folds = [int(x) for x in sys.argv[1].split(",")] if len(sys.argv) > 1 else range(5)
G, P, perfold = [], [], {}
for f in folds:
    tr, ev = split(R, f)
    vec = TfidfVectorizer(ngram_range=(1,2), sublinear_tf=True)
    X = vec.fit_transform([r["text"] for r in tr])
    clf = LogisticRegression(C=1, class_weight="balanced", max_iter=2000).fit(X, [r["gold"] for r in tr])
    pr = clf.predict(vec.transform([r["text"] for r in ev]))
    preds = [p if r["usable"] else "NOISE" for r, p in zip(ev, pr)]
    g = [r["gold"] for r in ev]
    perfold[f] = score(g, preds)
    G += g; P += preds
    print("fold", f, perfold[f]["macroF1"], perfold[f]["acc"])
res = dict(folds=list(folds), pooled=score(G, P), perfold={k: (v["macroF1"], v["acc"]) for k, v in perfold.items()})
print(json.dumps(res, indent=1))
json.dump(res, open(os.path.join(os.environ.get("OUT", "."), "baseline_result.json"), "w"), indent=1)
