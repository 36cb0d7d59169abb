#!/usr/bin/env python3
"""List words a paraphrase query shares with its target note, with their document frequency."""
import json, re
from pathlib import Path
TARGET = {"q27": "pillow-7.0", "q28": "pillow-6.2", "q29": "pillow-6.2", "q30": "pillow-2.7", "q31": "pillow-6.0", "q32": "pillow-10.1"}
docs = {json.loads(l)["_id"]: json.loads(l)["text"] for l in open("eval/retrieval/pillow/corpus.jsonl")}
tok = lambda s: set(w for w in re.findall(r"[a-z0-9]+", s.lower()) if len(w) > 2)
dtoks = {d: tok(t) for d, t in docs.items()}
for l in open("eval/retrieval/pillow/queries.jsonl"):
    q = json.loads(l)
    if q["_id"] in TARGET:
        shared = tok(q["text"]) & dtoks[TARGET[q["_id"]]]
        print(q["_id"], sorted((sum(w in t for t in dtoks.values()), w) for w in shared))
