import sys, json, time, random, os
import numpy as np, torch
from transformers import AutoTokenizer, AutoModel, get_linear_schedule_with_warmup
from common import *
torch.set_num_threads(2)
MP = "/root/.cache/epigraph/models/all-MiniLM-L6-v2"
EPOCHS = int(os.environ.get("EPOCHS", 3)); LR = float(os.environ.get("LR", 5e-5))
MAXLEN = int(os.environ.get("MAXLEN", 128)); BS = 16; SEED = 13
folds = [int(x) for x in sys.argv[1].split(",")] if len(sys.argv) > 1 else range(5)
tok = AutoTokenizer.from_pretrained(MP)
R = load()
C2I = {c: i for i, c in enumerate(CLASSES)}

class M(torch.nn.Module):
    def __init__(s):
        super().__init__()
        s.enc = AutoModel.from_pretrained(MP)
        s.drop = torch.nn.Dropout(0.1)
        s.head = torch.nn.Linear(s.enc.config.hidden_size, len(CLASSES))
    def forward(s, ids, am, tt):
        h = s.enc(input_ids=ids, attention_mask=am, token_type_ids=tt).last_hidden_state
        m = am.unsqueeze(-1).float()
        pooled = (h * m).sum(1) / m.sum(1).clamp(min=1)
        return s.head(s.drop(pooled))

def enc(rows):
    b = tok([r["section"] for r in rows], [r["text"] for r in rows], truncation="longest_first",
            max_length=MAXLEN, padding=True, return_tensors="pt")
    return b["input_ids"], b["attention_mask"], b["token_type_ids"]

for f in folds:
    t0 = time.time()
    random.seed(SEED + f); torch.manual_seed(SEED + f); np.random.seed(SEED + f)
    tr, ev = split(R, f)
    y = np.array([C2I[r["gold"]] for r in tr])
    cnt = np.bincount(y, minlength=len(CLASSES)).astype(float)
    w = np.where(cnt > 0, len(y) / (len(CLASSES) * np.maximum(cnt, 1)), 0.0)
    lossf = torch.nn.CrossEntropyLoss(weight=torch.tensor(w, dtype=torch.float))
    model = M()
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.01)
    steps = EPOCHS * ((len(tr) + BS - 1) // BS)
    sch = get_linear_schedule_with_warmup(opt, int(0.1 * steps), steps)
    for ep in range(EPOCHS):
        model.train(); idx = list(range(len(tr))); random.shuffle(idx); tot = 0
        for i in range(0, len(idx), BS):
            bi = idx[i:i + BS]
            ids, am, tt = enc([tr[j] for j in bi])
            loss = lossf(model(ids, am, tt), torch.tensor(y[bi]))
            opt.zero_grad(); loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step(); sch.step(); tot += loss.item() * len(bi)
        print(f"fold {f} epoch {ep} loss {tot/len(tr):.4f} t={time.time()-t0:.0f}s", flush=True)
    model.eval(); preds = []
    with torch.no_grad():
        for i in range(0, len(ev), 64):
            lo = model(*enc(ev[i:i + 64]))
            preds += [CLASSES[k] for k in lo.argmax(-1).tolist()]
    final = [p if r["usable"] else "NOISE" for r, p in zip(ev, preds)]
    g = [r["gold"] for r in ev]
    s = score(g, final); dt = time.time() - t0
    print(f"fold {f} done in {dt:.0f}s ntrain={len(tr)} neval={len(ev)} macroF1={s['macroF1']} acc={s['acc']}", flush=True)
    json.dump(dict(fold=f, secs=dt, ntrain=len(tr), epochs=EPOCHS, lr=LR, maxlen=MAXLEN,
                   ids=[r["id"] for r in ev], gold=g, pred=final, score=s),
              open(os.path.join(os.environ.get("OUT", "."), "ft" + os.environ.get("TAG", "") + f"_fold{f}.json"), "w"))
