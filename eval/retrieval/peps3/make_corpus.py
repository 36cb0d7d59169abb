#!/usr/bin/env python3
"""Build eval/retrieval/peps3/corpus.jsonl from the PEP fixtures (reStructuredText).

Usage: make_corpus.py [--src tests/fixtures/peps] [--out eval/retrieval/peps3]

eval/retrieval/make_peps.py with a new list of PEPs and a new default output folder: the text
preparation is that script's own (imported, `write_corpus`), exactly as in peps2/make_corpus.py.
The `_id`s of eval/retrieval/peps/corpus.jsonl and eval/retrieval/peps2/corpus.jsonl are read
and the script refuses to write a document that is in either earlier set (a missing earlier
corpus is an error, not skipped: the check must always run).

Each selected PEP becomes one BEIR document exactly as in make_peps.py (its docstring says
which header fields are kept and how the body is cut); `metadata.occurred_at` is the Created
date (make_peps.created_at).

queries.jsonl, qrels/*.tsv, state.jsonl and second/sample.json are written by hand and are not
touched here. Deterministic: the same fixtures give byte-identical output.
"""
import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from make_peps import write_corpus  # noqa: E402  (the first set's text preparation)

# 40 PEPs, none of them in eval/retrieval/peps/ or eval/retrieval/peps2/, in loose topical
# clusters: release schedules (1.6 160, 2.2 251, 2.3 283), the PEP template (plaintext 9 ->
# reStructuredText 12), command-line parsing (optparse adopted in 283 -> argparse 389), the
# C API and extensions (Distutils build 229, argument tuples 286 deferred, locked buffers 298
# withdrawn, GIL acquisition 311), standard-library modules (weakref 205, hash and cipher APIs
# 247/272, csv 305, pickle protocol 2 307, date parsing 321 withdrawn, subprocess 324, Path 355
# rejected, Py3K renames 364 withdrawn, pkg_resources 365 rejected, multiprocessing 371),
# numbers and literals (\x escapes 223, numeric kinds 242 withdrawn, divmod 303 rejected,
# Roman numerals 313 rejected, locale-free floats 331, thousands separator 378), and syntax
# proposals, mostly turned down (print 259, switch 275, __main__ 299, do-while 315,
# synchronize 319, try/except/finally 341, freeze 351, make 359, x.(name) 363, new super 367,
# with-skip 377, assignment expression 379), plus the Zen of Python (20).
PEPS = [
    160, 251, 283,
    9, 12,
    389,
    229, 286, 298, 311,
    205, 247, 272, 305, 307, 321, 324, 355, 364, 365, 371,
    223, 242, 303, 313, 331, 378,
    259, 275, 299, 315, 319, 341, 351, 359, 363, 367, 377, 379,
    20,
]
EARLIER = ("peps", "peps2")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", default="tests/fixtures/peps")
    ap.add_argument("--out", default=str(HERE))
    args = ap.parse_args()
    if len(set(PEPS)) != len(PEPS):
        raise SystemExit("duplicate PEP in PEPS")
    for name in EARLIER:
        earlier = HERE.parent / name / "corpus.jsonl"
        if not earlier.exists():
            raise SystemExit(f"missing {earlier}: cannot check that the sets are disjoint")
        taken = {json.loads(line)["_id"] for line in earlier.read_text(encoding="utf-8").splitlines() if line.strip()}
        overlap = sorted(f"pep-{n:04d}" for n in PEPS if f"pep-{n:04d}" in taken)
        if overlap:
            raise SystemExit(f"PEPs already in {earlier}: {overlap}")
    write_corpus(PEPS, args.src, Path(args.out))


if __name__ == "__main__":
    main()
