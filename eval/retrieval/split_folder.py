#!/usr/bin/env python3
"""Write one split of a BEIR folder as a folder of its own, for `epigraph eval retrieval`.

    split_folder.py eval/retrieval/keps dev /tmp/kepret-dev

Copies `corpus.jsonl`; keeps the queries whose `metadata.split` is the split; writes the qrels
of `qrels/<split>.tsv` as `qrels/test.tsv` (what `eval retrieval` reads) and the state pairs of
the kept queries. Only the split's qrels file is opened (for `dev`, never `heldout.tsv` or the
all-queries `test.tsv`; for `test`, `heldout.tsv`). Stdlib only.
"""

import json
import shutil
import sys
from pathlib import Path


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, split, dst = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    if split not in ("dev", "test"):
        sys.exit(f"only the dev and test splits are written by this script (asked: {split!r})")
    (dst / "qrels").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src / "corpus.jsonl", dst / "corpus.jsonl")
    kept = []
    ids = set()
    for line in (src / "queries.jsonl").read_text().splitlines():
        if line.strip() and json.loads(line).get("metadata", {}).get("split") == split:
            kept.append(line)
            ids.add(json.loads(line)["_id"])
    (dst / "queries.jsonl").write_text("".join(l + "\n" for l in kept))
    # The test split's judgements are `heldout.tsv` (`test.tsv` holds every query's).
    qrels = "heldout.tsv" if split == "test" else f"{split}.tsv"
    shutil.copyfile(src / "qrels" / qrels, dst / "qrels" / "test.tsv")
    pairs = [l for l in (src / "state.jsonl").read_text().splitlines()
             if l.strip() and json.loads(l)["query_id"] in ids]
    (dst / "state.jsonl").write_text("".join(l + "\n" for l in pairs))
    print(f"{dst}: {len(kept)} queries, {len(pairs)} state pairs")


if __name__ == "__main__":
    main()
