#!/usr/bin/env python3
"""Validate the hand-labelled real-text sets (stdlib only).

Usage:
    python3 eval/extraction/real/check.py [FIXTURES_DIR]

FIXTURES_DIR defaults to tests/fixtures of the repository
(i.e. the directory that contains peps/ and slack-export/).

Checks:
  * every line is a JSON object with the expected fields;
  * ids are unique and of the form real-NNNN;
  * type / statement_type / temporal_type / split / entity kinds are in the
    allowed sets;
  * every "text" is a verbatim substring of its source: for PEPs, of the raw
    .rst file contents; for Slack, of the "text" field of some message in
    that day file;
  * every entity "text" is a substring of the unit text.
  * train.jsonl (split "train", ids train-NNNN) and fresh.jsonl (split
    "fresh", ids fresh-NNNN) pass the same checks, and the three files use
    pairwise disjoint sources (no PEP or Slack day appears in two files).
Prints counts per type per split and exits non-zero on any failure.
"""
import json
import os
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
# file name, allowed splits, id prefix
FILES = [("sentences.jsonl", ["dev", "test"], "real-"),
         ("train.jsonl", ["train"], "train-"),
         ("fresh.jsonl", ["fresh"], "fresh-")]

TYPES = ["DECISION", "CONSTRAINT", "EVIDENCE", "NARRATIVE", "PLAN",
         "EVALUATION", "OBSERVATION", "HYPOTHESIS", "QUESTION", "NOISE"]
STATEMENT_TYPES = {"fact", "opinion", "prediction"}
TEMPORAL_TYPES = {"static", "dynamic", "atemporal"}
ENTITY_KINDS = {"Person", "Organization", "Project", "Product", "Location",
                "Topic", "Event", "Document"}
FIELDS = ["id", "source", "section", "text", "type", "statement_type",
          "temporal_type", "entities", "split"]


def check_file(name, splits, prefix, source_texts, errors):
    rows = []
    with open(os.path.join(HERE, name), encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                errors.append("%s line %d: invalid JSON: %s" % (name, n, exc))

    seen = set()
    seen_text = set()
    for r in rows:
        rid = r.get("id", "?")
        missing = [f for f in FIELDS if f not in r]
        if missing:
            errors.append("%s: missing fields %s" % (rid, missing))
            continue
        if not (isinstance(rid, str) and rid.startswith(prefix)
                and rid[len(prefix):].isdigit()):
            errors.append("%s: bad id" % rid)
        if rid in seen:
            errors.append("%s: duplicate id" % rid)
        seen.add(rid)
        if r["type"] not in TYPES:
            errors.append("%s: bad type %r" % (rid, r["type"]))
        if r["statement_type"] not in STATEMENT_TYPES:
            errors.append("%s: bad statement_type %r" % (rid, r["statement_type"]))
        if r["temporal_type"] not in TEMPORAL_TYPES:
            errors.append("%s: bad temporal_type %r" % (rid, r["temporal_type"]))
        if r["split"] not in splits:
            errors.append("%s: bad split %r" % (rid, r["split"]))
        text = r["text"]
        if not isinstance(text, str) or not text.strip():
            errors.append("%s: empty text" % rid)
            continue
        if (r["source"], text) in seen_text:
            errors.append("%s: duplicate unit text in %s" % (rid, r["source"]))
        seen_text.add((r["source"], text))
        src = r["source"]
        if not (src.startswith("peps/") or src.startswith("slack-export/")):
            errors.append("%s: unexpected source %r" % (rid, src))
        texts = source_texts(src)
        if texts is None:
            errors.append("%s: source file not found: %s" % (rid, src))
        elif not any(text in t for t in texts):
            errors.append("%s: text is not a verbatim substring of %s" % (rid, src))
        if not isinstance(r["entities"], list):
            errors.append("%s: entities is not a list" % rid)
            continue
        for e in r["entities"]:
            if not isinstance(e, dict) or set(e) != {"text", "kind"}:
                errors.append("%s: malformed entity %r" % (rid, e))
                continue
            if e["kind"] not in ENTITY_KINDS:
                errors.append("%s: bad entity kind %r" % (rid, e["kind"]))
            if not e["text"] or e["text"] not in text:
                errors.append("%s: entity %r not in text" % (rid, e["text"]))

    counts = Counter((r.get("type"), r.get("split")) for r in rows)
    print("== %s" % name)
    print("%-12s" % "type" + "".join(" %6s" % s for s in splits) + " %6s" % "total")
    for t in TYPES:
        c = [counts[(t, s)] for s in splits]
        print("%-12s" % t + "".join(" %6d" % x for x in c) + " %6d" % sum(c))
    c = [sum(1 for r in rows if r.get("split") == s) for s in splits]
    print("%-12s" % "all" + "".join(" %6d" % x for x in c) + " %6d" % len(rows))
    peps = {r["source"] for r in rows if r.get("source", "").startswith("peps/")}
    slack = sum(1 for r in rows if r.get("source", "").startswith("slack-export/"))
    print("distinct PEPs: %d, Slack units: %d" % (len(peps), slack))
    return {r.get("source") for r in rows}



def main():
    fixtures = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        REPO_ROOT, "tests", "fixtures")
    fixtures = os.path.abspath(fixtures)
    if not os.path.isdir(fixtures):
        print("fixtures dir not found: %s" % fixtures)
        return 2

    errors = []
    cache = {}

    def source_texts(src):
        if src in cache:
            return cache[src]
        path = os.path.join(fixtures, src)
        if not os.path.isfile(path):
            cache[src] = None
            return None
        if src.startswith("slack-export/"):
            with open(path, encoding="utf-8") as fh:
                msgs = json.load(fh)
            val = [m.get("text") or "" for m in msgs if isinstance(m, dict)]
        else:
            with open(path, encoding="utf-8") as fh:
                val = [fh.read()]
        cache[src] = val
        return val

    sources = {}
    for name, splits, prefix in FILES:
        if not os.path.isfile(os.path.join(HERE, name)):
            errors.append("%s: file missing" % name)
            continue
        sources[name] = check_file(name, splits, prefix, source_texts, errors)
    names = sorted(sources)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            shared = sources[a] & sources[b]
            if shared:
                errors.append("%s and %s share sources: %s"
                              % (a, b, ", ".join(sorted(shared))))
    if errors:
        print("\n%d error(s):" % len(errors))
        for e in errors:
            print("  " + e)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
