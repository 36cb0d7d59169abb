#!/usr/bin/env python3
"""List words a paraphrase query shares with its target note, with their document frequency."""
import json, re
from pathlib import Path
TARGET = {"q29": "matplotlib-3.3", "q30": "matplotlib-2.1", "q31": "matplotlib-3.2", "q32": "matplotlib-3.7", "q33": "matplotlib-3.9", "q34": "matplotlib-3.8"}
docs = {json.loads(l)["_id"]: json.loads(l)["text"] for l in open("eval/retrieval/matplotlib/corpus.jsonl")}
tok = lambda s: set(w for w in re.findall(r"[a-z0-9]+", s.lower()) if len(w) > 2)
dtoks = {d: tok(t) for d, t in docs.items()}
for l in open("eval/retrieval/matplotlib/queries.jsonl"):
    q = json.loads(l)
    if q["_id"] in TARGET:
        shared = tok(q["text"]) & dtoks[TARGET[q["_id"]]]
        print(q["_id"], sorted((sum(w in t for t in dtoks.values()), w) for w in shared))
