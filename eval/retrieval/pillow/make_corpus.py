#!/usr/bin/env python3
"""Build eval/retrieval/pillow/corpus.jsonl from the Pillow release-note fixtures.

Usage (from the repository root, no arguments): python3 eval/retrieval/pillow/make_corpus.py

Every file tests/fixtures/pillow-releases/pillow-X.Y.txt (40; docs/releasenotes/X.Y.0.rst of
the pillow-11.0.0 sdist, byte for byte) becomes one BEIR document:
  _id      = the file name without ".txt", e.g. "pillow-9.1"
  title    = the note's title line ("9.1.0"): the first line that is neither empty, an RST
             over/underline nor an RST directive ("..")
  text     = the file verbatim
  metadata = {"occurred_at": "<YYYY-MM-DD>T00:00:00Z"}: the release day from
             tests/fixtures/pillow-releases/dates.tsv (earliest PyPI upload of X.Y.0).
             A file without a date is an error.

Deterministic (stdlib only): the same fixtures give byte-identical output, documents in
release order.
"""
import json
from pathlib import Path

ROOT = Path("tests/fixtures/pillow-releases")
OUT = Path("eval/retrieval/pillow/corpus.jsonl")


def version_key(path: Path):
    return tuple(int(p) for p in path.stem.split("-", 1)[1].split("."))


def title_of(text: str) -> str:
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("..") or set(s) <= set("=-~*#^"):
            continue
        return s
    raise SystemExit("no title line")


def main() -> None:
    dates = {}
    for line in (ROOT / "dates.tsv").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            doc, day = line.split("\t")[:2]
            dates[doc] = day
    docs = []
    for path in sorted(ROOT.glob("pillow-*.txt"), key=version_key):
        text = path.read_text(encoding="utf-8")
        day = dates.get(path.stem)
        if not day:
            raise SystemExit(f"{path}: no date in dates.tsv")
        docs.append({
            "_id": path.stem,
            "title": title_of(text),
            "text": text,
            "metadata": {"occurred_at": f"{day}T00:00:00Z"},
        })
    with OUT.open("w", encoding="utf-8") as out:
        for doc in docs:
            out.write(json.dumps(doc, ensure_ascii=False) + "\n")
    print(f"{len(docs)} documents, {sum(len(d['text'].encode()) for d in docs)} bytes of text -> {OUT}")


if __name__ == "__main__":
    main()
