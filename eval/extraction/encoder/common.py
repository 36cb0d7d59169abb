import json
import os
from sklearn.metrics import f1_score, accuracy_score
CLASSES = ["DECISION","CONSTRAINT","EVIDENCE","NARRATIVE","PLAN","EVALUATION","OBSERVATION","HYPOTHESIS","QUESTION","NOISE"]
NINE = CLASSES[:9]
def load(path=os.environ.get("FOLDS", "/tmp/ft/data.jsonl")):
    return [json.loads(l) for l in open(path)]
def split(R, f):
    tr = [r for r in R if r["fold"] != f and r["usable"]]
    ev = [r for r in R if r["old"] and r["fold"] == f]
    return tr, ev
def score(golds, preds):
    mf = f1_score(golds, preds, labels=NINE, average="macro", zero_division=0)
    per = f1_score(golds, preds, labels=NINE, average=None, zero_division=0)
    return dict(macroF1=round(mf,4), acc=round(accuracy_score(golds, preds),4), n=len(golds),
                per={k: round(v,3) for k, v in zip(NINE, per)})
