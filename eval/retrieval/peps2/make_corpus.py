#!/usr/bin/env python3
"""Build eval/retrieval/peps2/corpus.jsonl from the PEP fixtures (reStructuredText).

Usage: make_corpus.py [--src tests/fixtures/peps] [--out eval/retrieval/peps2]

A copy of eval/retrieval/make_peps.py with a new list of PEPs and a new default output folder;
the text preparation is unchanged. If eval/retrieval/peps/corpus.jsonl exists, its `_id`s are
read and the script refuses to write a document that is also in the first set.

Each selected PEP becomes one BEIR document:
  _id   = "pep-NNNN"
  title = the PEP's Title header
  text  = the header block reduced to its descriptive fields (PEP, Title, Status, Type,
          Created, Python-Version, Replaces, Superseded-By, Resolution, Requires, Topic), one
          "Field: value" line each, then a blank line and the body verbatim (reStructuredText),
          without the trailing Emacs "Local Variables" comment block. Author, Discussions-To
          and Post-History (people, addresses, lists of dates) are dropped.

queries.jsonl, qrels/test.tsv and state.jsonl are written by hand and are not touched here.
Deterministic: the same fixtures give byte-identical output.
"""
import argparse
import json
import re
from pathlib import Path

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
KEEP = {"PEP", "Title", "Status", "Type", "Created", "Python-Version", "Replaces",
        "Superseded-By", "Resolution", "Requires", "Topic"}


def parse(path: Path):
    lines = path.read_text(encoding="utf-8").split("\n")
    fields, current, i = [], None, 0
    while i < len(lines) and lines[i].strip():
        line = lines[i]
        if line[0] in " \t" and current is not None:
            current[1] = current[1] + " " + line.strip()
        else:
            name, _, value = line.partition(":")
            current = [name.strip(), value.strip()]
            fields.append(current)
        i += 1
    body = "\n".join(lines[i:])
    # Drop the Emacs footer (".." followed by an indented "Local Variables:" block).
    body = re.sub(r"\n\.\.\s*\n\s+Local Variables:.*\Z", "\n", body, flags=re.S)
    return dict(fields), [(k, v) for k, v in fields if k in KEEP], body.strip() + "\n"


def created_at(value):
    """`07-Jul-2001` (the PEP header's format) as an RFC 3339 instant, or None."""
    from datetime import datetime
    try:
        return datetime.strptime(value.strip(), "%d-%b-%Y").strftime("%Y-%m-%dT00:00:00Z")
    except ValueError:
        return None


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
    out.mkdir(parents=True, exist_ok=True)
    total = 0
    with open(out / "corpus.jsonl", "w", encoding="utf-8", newline="\n") as f:
        for n in PEPS:
            fields, kept, body = parse(Path(args.src) / f"pep-{n:04d}.rst")
            text = "\n".join(f"{k}: {v}" for k, v in kept) + "\n\n" + body
            total += len(text.encode("utf-8"))
            doc = {"_id": f"pep-{n:04d}", "title": fields["Title"], "text": text}
            created = created_at(fields.get("Created", ""))
            if created is not None:
                doc["metadata"] = {"occurred_at": created}
            f.write(json.dumps(doc, ensure_ascii=False) + "\n")
    print(f"{len(PEPS)} documents, {total} bytes of text -> {out / 'corpus.jsonl'}")


if __name__ == "__main__":
    main()
