"""Fine-tune MiniLM with the rule classifier's cue scores in the head (CV on the folds file).

As finetune.py (whole encoder fine-tuned, mean pooling, input `section [SEP] text`, 128
tokens, AdamW, linear warm-up/decay, batch 16, balanced class weights, seed 13 + fold), but the
linear head reads concat[pooled embedding, ln(1 + rule_scores) (9), one-hot rule_type (10)],
the cues joined by id from the feature dumps of train_typer.py --cache. The head gets its own
learning rate (HEAD_LR) so the 19 cue weights can move in a few hundred steps. Writes, per
fold, the held-out predictions *and softmax probabilities* (CLASSES order) to
$OUT/ftc$TAG_fold<f>.json, for ensemble.py.

    CUES=1 EPOCHS=4 TAG=_cues  python finetune_cues.py 0,1,2,3,4   # variant A
    CUES=1 CUE_INIT=1 TAG=_cuesinit python finetune_cues.py 0,1,2,3,4  # A': head warm-started
    CUES=0 EPOCHS=4 TAG=_plain python finetune_cues.py 0,1,2,3,4   # same, no cues (for B)
    CUES=1 PREV=1 MAXLEN=192 TAG=_prev python finetune_cues.py 0,1,2,3,4
        # + the 200 characters of the document before the unit (FIXTURES/source) as context:
        #   input `section [SEP] context || text`
"""
import json
import os
import random
import sys
import time

import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer, get_linear_schedule_with_warmup

from common import CLASSES, load, score, split

torch.set_num_threads(2)
MP = "/root/.cache/epigraph/models/all-MiniLM-L6-v2"
E = os.environ.get
EPOCHS, LR, HEAD_LR = int(E("EPOCHS", 4)), float(E("LR", 5e-5)), float(E("HEAD_LR", 1e-3))
MAXLEN, BS, SEED = int(E("MAXLEN", 128)), 16, 13
CUES, PREV, SCALE = E("CUES", "1") == "1", E("PREV", "0") == "1", float(E("CUE_SCALE", 1))
CACHE = E("CACHE", "/tmp/tcache")
CUE_INIT = E("CUE_INIT", "0") == "1"  # warm-start the head's cue weights from a cues-only LR
folds = [int(x) for x in sys.argv[1].split(",")] if len(sys.argv) > 1 else range(5)
tok = AutoTokenizer.from_pretrained(MP)
R = load()
C2I = {c: i for i, c in enumerate(CLASSES)}

dump = {}
for name in ("train.jsonl", "sentences.jsonl"):
    for line in open(os.path.join(CACHE, name)):
        d = json.loads(line)
        dump[d["id"]] = d


def cues(r):
    d = dump[r["id"]]
    v = np.zeros(19, dtype=np.float32)
    if d.get("matched"):
        v[:9] = np.log1p(np.array(d["rule_scores"], dtype=np.float32)) * SCALE
        v[9 + C2I[d["rule_type"]]] = 1.0
    return v


FIX = E("FIXTURES", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "fixtures"))
prev = {}  # PREV=1: the ~CTX characters of the source document just before the unit
if PREV:
    docs, CTX = {}, int(E("CTX", 200))
    for r in R:
        if r["source"] not in docs:
            p = os.path.join(FIX, r["source"])
            docs[r["source"]] = open(p, encoding="utf-8").read() if os.path.exists(p) else ""
        t = docs[r["source"]]; i = t.find(r["text"])
        c = " ".join(t[max(0, i - CTX):i].split()) if i > 0 else ""
        prev[r["id"]] = c.split(" ", 1)[1] if " " in c and i > CTX else c  # cut at a word


class M(torch.nn.Module):
    def __init__(s):
        super().__init__()
        s.enc = AutoModel.from_pretrained(MP)
        s.drop = torch.nn.Dropout(0.1)
        s.head = torch.nn.Linear(s.enc.config.hidden_size + (19 if CUES else 0), len(CLASSES))

    def forward(s, ids, am, tt, cv):
        h = s.enc(input_ids=ids, attention_mask=am, token_type_ids=tt).last_hidden_state
        m = am.unsqueeze(-1).float()
        x = s.drop((h * m).sum(1) / m.sum(1).clamp(min=1))
        return s.head(torch.cat([x, cv], 1) if CUES else x)


def enc(rows):
    text = [(prev[r["id"]] + " || " + r["text"]) if PREV and prev[r["id"]] else r["text"] for r in rows]
    b = tok([r["section"] for r in rows], text, truncation="longest_first",
            max_length=MAXLEN, padding=True, return_tensors="pt")
    cv = torch.tensor(np.stack([cues(r) for r in rows]))
    return b["input_ids"], b["attention_mask"], b["token_type_ids"], cv


for f in folds:
    t0 = time.time()
    random.seed(SEED + f); torch.manual_seed(SEED + f); np.random.seed(SEED + f)
    tr, ev = split(R, f)
    y = np.array([C2I[r["gold"]] for r in tr])
    cnt = np.bincount(y, minlength=len(CLASSES)).astype(float)
    w = np.where(cnt > 0, len(y) / (len(CLASSES) * np.maximum(cnt, 1)), 0.0)
    lossf = torch.nn.CrossEntropyLoss(weight=torch.tensor(w, dtype=torch.float))
    model = M()
    if CUES and CUE_INIT:  # head starts as a cues-only logistic regression fitted on this fold's
        from sklearn.linear_model import LogisticRegression  # training rows; text weights at 0
        lr = LogisticRegression(C=1, class_weight="balanced", max_iter=3000)
        lr.fit(np.stack([cues(r) for r in tr]), y)
        assert list(lr.classes_) == list(range(len(CLASSES)))
        H = model.enc.config.hidden_size
        with torch.no_grad():
            model.head.weight.zero_()
            model.head.weight[:, H:] = torch.tensor(lr.coef_, dtype=torch.float)
            model.head.bias[:] = torch.tensor(lr.intercept_, dtype=torch.float)
    opt = torch.optim.AdamW([{"params": model.enc.parameters(), "lr": LR},
                             {"params": model.head.parameters(), "lr": HEAD_LR}], weight_decay=0.01)
    steps = EPOCHS * ((len(tr) + BS - 1) // BS)
    sch = get_linear_schedule_with_warmup(opt, int(0.1 * steps), steps)
    for ep in range(EPOCHS):
        model.train(); idx = list(range(len(tr))); random.shuffle(idx); tot = 0
        for i in range(0, len(idx), BS):
            bi = idx[i:i + BS]
            loss = lossf(model(*enc([tr[j] for j in bi])), torch.tensor(y[bi]))
            opt.zero_grad(); loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step(); sch.step(); tot += loss.item() * len(bi)
        print(f"fold {f} epoch {ep} loss {tot/len(tr):.4f} t={time.time()-t0:.0f}s", flush=True)
    model.eval(); probs = []
    with torch.no_grad():
        for i in range(0, len(ev), 64):
            probs += torch.softmax(model(*enc(ev[i:i + 64])), -1).tolist()
    final = [CLASSES[int(np.argmax(p))] if r["usable"] else "NOISE" for r, p in zip(ev, probs)]
    g = [r["gold"] for r in ev]
    s = score(g, final); dt = time.time() - t0
    print(f"fold {f} done in {dt:.0f}s ntrain={len(tr)} neval={len(ev)} macroF1={s['macroF1']} acc={s['acc']}", flush=True)
    json.dump(dict(fold=f, secs=dt, ntrain=len(tr), epochs=EPOCHS, lr=LR, head_lr=HEAD_LR, maxlen=MAXLEN,
                   cues=CUES, cue_init=CUE_INIT, prev=PREV, cue_scale=SCALE, ids=[r["id"] for r in ev], gold=g, pred=final,
                   usable=[r["usable"] for r in ev], probs=np.round(probs, 6).tolist(), score=s),
              open(os.path.join(E("OUT", "."), "ftc" + E("TAG", "") + f"_fold{f}.json"), "w"))
