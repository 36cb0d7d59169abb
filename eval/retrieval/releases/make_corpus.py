#!/usr/bin/env python3
"""Build eval/retrieval/releases/corpus.jsonl from the release-note fixtures.

Usage (from the repository root, no arguments): python3 eval/retrieval/releases/make_corpus.py

Every file of tests/fixtures/django-releases/django-X.Y.txt (25) and
tests/fixtures/numpy-releases/numpy-X.Y.txt (26) becomes one BEIR document:
  _id      = the file name without ".txt", e.g. "django-1.8", "numpy-1.20"
  title    = the note's title line ("Django 1.8 release notes",
             "NumPy 1.20.0 Release Notes"): the first line that is neither an RST
             over/underline nor an RST directive ("..")
  text     = the file verbatim
  metadata = {"occurred_at": "<YYYY-MM-DD>T00:00:00Z"}: Django's own date line
             ("*April 1, 2015*", the first line that is a whole date, italic or not; 0.95, 0.96, 1.0
             and 1.6 have none and take their release day from UNDATED), NumPy's date
             from tests/fixtures/numpy-releases/dates.tsv (earliest PyPI upload of the
             release). A file without a date is an error.

Deterministic (stdlib only): the same fixtures give byte-identical output, documents in
release order within each project (Django first).
"""
import datetime
import json
import re
from pathlib import Path

ROOT = Path("tests/fixtures")
OUT = Path("eval/retrieval/releases/corpus.jsonl")
DATE = re.compile(r"^\*?([A-Z][a-z]+ \d{1,2}, \d{4})\.?\*?\s*$")
# Four notes carry no date line of their own; their release days (djangoproject.com weblog
# announcements of 0.95, 0.96, 1.0 and 1.6).
UNDATED = {"django-0.95": "2006-07-29", "django-0.96": "2007-03-23", "django-1.0": "2008-09-03", "django-1.6": "2013-11-06"}


def version_key(path: Path):
    return tuple(int(p) for p in path.stem.split("-", 1)[1].split("."))


def title_of(text: str) -> str:
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("..") or set(s) <= set("=-~*#^"):
            continue
        return s
    raise SystemExit("no title line")


def django_date(path: Path, text: str) -> str:
    if path.stem in UNDATED:
        return UNDATED[path.stem]
    for line in text.splitlines():
        m = DATE.match(line.strip())
        if m:
            return datetime.datetime.strptime(m.group(1), "%B %d, %Y").date().isoformat()
    raise SystemExit(f"{path}: no date line")


def main() -> None:
    numpy_dates = {}
    for line in (ROOT / "numpy-releases/dates.tsv").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            doc, day = line.split("\t")[:2]
            numpy_dates[doc] = day
    docs = []
    for project in ("django", "numpy"):
        for path in sorted((ROOT / f"{project}-releases").glob(f"{project}-*.txt"), key=version_key):
            text = path.read_text(encoding="utf-8")
            day = django_date(path, text) if project == "django" else numpy_dates.get(path.stem)
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
