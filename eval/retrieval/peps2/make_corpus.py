#!/usr/bin/env python3
"""Build eval/retrieval/peps2/corpus.jsonl from the PEP fixtures (reStructuredText).

Usage: make_corpus.py [--src tests/fixtures/peps] [--out eval/retrieval/peps2]

eval/retrieval/make_peps.py with a new list of PEPs and a new default output folder: the text
preparation is that script's own (imported, `write_corpus`). If eval/retrieval/peps/corpus.jsonl exists, its `_id`s are
read and the script refuses to write a document that is also in the first set.

Each selected PEP becomes one BEIR document exactly as in make_peps.py (its docstring says
which header fields are kept and how the body is cut).

queries.jsonl, qrels/test.tsv and state.jsonl are written by hand and are not touched here.
Deterministic: the same fixtures give byte-identical output.
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from make_peps import write_corpus  # noqa: E402  (the first set's text preparation)

# 39 PEPs, none of them in eval/retrieval/peps/corpus.jsonl, in topical clusters so that queries
# have near misses and "current state" questions have an older and a newer document: release
# schedules (2.4, 2.5, 2.6/3.0, 3.2, 3.3), the import system (zip imports 273, import hooks 302,
# absolute/relative imports 328, -m 338 -> 366, user site-packages 370, namespace packages 382
# rejected, 395 withdrawn), unicode and strings (wide builds 261 -> 393, source encodings 263,
# file names 277 and 383, 349 rejected), numbers (237, rationals 239/240 rejected, decimal 327),
# exceptions (344 superseded, 348 rejected -> 352, 317 rejected), decorators and function
# objects (318, 232, 309), conditional expressions (308), string templates (292), docstrings and
# Docutils (256, 258 rejected; 257, 287), and logging (282, 337 deferred, 391).
PEPS = [
    320, 356, 361, 392, 398,
    273, 302, 328, 338, 366, 370, 382, 395,
    261, 263, 277, 383, 393, 349,
    237, 239, 240, 327,
    344, 348, 352, 317,
    318, 232, 309,
    308,
    292,
    256, 257, 258, 287,
    282, 337, 391,
]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", default="tests/fixtures/peps")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent))
    ap.add_argument("--first", default=str(Path(__file__).resolve().parent.parent / "peps" / "corpus.jsonl"),
                    help="first set's corpus, whose ids must not be reused (skipped if missing)")
    args = ap.parse_args()
    out = Path(args.out)
    first = Path(args.first)
    if first.exists():
        taken = {json.loads(line)["_id"] for line in first.read_text(encoding="utf-8").splitlines() if line.strip()}
        overlap = sorted(f"pep-{n:04d}" for n in PEPS if f"pep-{n:04d}" in taken)
        if overlap:
            raise SystemExit(f"PEPs already in {first}: {overlap}")
    if len(set(PEPS)) != len(PEPS):
        raise SystemExit("duplicate PEP in PEPS")
    write_corpus(PEPS, args.src, out)


if __name__ == "__main__":
    main()
