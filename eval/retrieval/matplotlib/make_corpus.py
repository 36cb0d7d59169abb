#!/usr/bin/env python3
"""Build eval/retrieval/matplotlib/corpus.jsonl from the matplotlib API-change fixtures.

Usage (from the repository root): python3 eval/retrieval/matplotlib/make_corpus.py [FIXTURE_DIR]
FIXTURE_DIR defaults to tests/fixtures/matplotlib-api-changes.

Every file FIXTURE_DIR/matplotlib-X.Y.txt (13; the "API Changes for X.Y.0" notes of
matplotlib 2.0 ... 3.9 from doc/api/prev_api_changes/ of the matplotlib-3.9.4 sdist, see the
fixture's README.md) becomes one BEIR document:
  _id      = the file name without ".txt", e.g. "matplotlib-3.5"
  title    = the note's title line ("API Changes for 3.5.0"): the first line that is neither
             empty, an RST over/underline nor an RST directive ("..")
  text     = the file verbatim
  metadata = {"occurred_at": "<YYYY-MM-DD>T00:00:00Z"}: the release day from
             FIXTURE_DIR/dates.tsv (earliest PyPI upload of X.Y.0).
             A file without a date is an error.

Deterministic (stdlib only): the same fixtures give byte-identical output, documents in
release order. Adapted from eval/retrieval/pillow/make_corpus.py.
"""
import json
import sys
from pathlib import Path

ROOT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("tests/fixtures/matplotlib-api-changes")
OUT = Path("eval/retrieval/matplotlib/corpus.jsonl")


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
    for path in sorted(ROOT.glob("matplotlib-*.txt"), key=version_key):
        text = path.read_bytes().decode("utf-8")  # verbatim (no newline translation)
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
