#!/usr/bin/env python3
"""Build eval/retrieval/peps/corpus.jsonl from the PEP fixtures (reStructuredText).

Usage: make_peps.py [--src tests/fixtures/peps] [--out eval/retrieval/peps]

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

# About 390 KB of text in 34 PEPs, chosen in topical clusters so that queries have near misses:
# process and governance (with the 102 -> 101 and 291 -> 387 supersessions), packaging metadata
# (241 -> 314 -> 345, and the rejected 262 vs the accepted 376), version control (CVS -> 347
# Subversion -> 385 Mercurial), the with statement (310, 340 -> 343), generators and coroutines
# (288, 325 -> 342), loop counters (212, 281 -> 279), and PEPs with Open Issues sections.
PEPS = [
    2, 4, 6, 10, 13, 101, 102, 291, 387, 394,
    241, 314, 345, 262, 376,
    347, 385,
    310, 340, 343,
    288, 325, 342,
    212, 281, 279,
    203, 222, 238, 353, 358, 369,
    373, 375,
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


def write_corpus(peps, src, out):
    """Write `out/corpus.jsonl` from the PEPs numbered `peps` in the folder `src`."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    total = 0
    with open(out / "corpus.jsonl", "w", encoding="utf-8", newline="\n") as f:
        for n in peps:
            fields, kept, body = parse(Path(src) / f"pep-{n:04d}.rst")
            text = "\n".join(f"{k}: {v}" for k, v in kept) + "\n\n" + body
            total += len(text.encode("utf-8"))
            doc = {"_id": f"pep-{n:04d}", "title": fields["Title"], "text": text}
            created = created_at(fields.get("Created", ""))
            if created is not None:
                doc["metadata"] = {"occurred_at": created}
            f.write(json.dumps(doc, ensure_ascii=False) + "\n")
    print(f"{len(peps)} documents, {total} bytes of text -> {out / 'corpus.jsonl'}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", default="tests/fixtures/peps")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "peps"))
    args = ap.parse_args()
    write_corpus(PEPS, args.src, args.out)


if __name__ == "__main__":
    main()
