#!/usr/bin/env python3
"""Build a BEIR retrieval set from an `epigraph gen` output folder.

Usage: make_generated.py <gen dir> <out dir> [--max-queries 150] [--seed 0]

Reads <gen dir>/events.jsonl and <gen dir>/labels/*.jsonl and writes <out dir>/corpus.jsonl,
queries.jsonl, qrels/test.tsv and state.jsonl. Deterministic: the same input and --seed give
byte-identical output.

Corpus: the final version of every source in events.jsonl (the last event per source_id; a
source whose last event is a delete is skipped): _id = source_id, title, text = body.

Queries (natural questions built from the labels; relevance 2 = answers it, 1 = related):
  state-*   one per superseded matter (labels/supersessions.jsonl grouped by matter, in label
            order): "When is the Vortex launch now?". The source of the newest unit of the
            chain is graded 2, as is any source claiming that same value (claims.jsonl); every
            other source of the chain, and other claims on the same attribute, get 1.
            state.jsonl gets one pair per source of the chain graded 1 (current = the head's
            source). A matter whose later claims disagree with the head is skipped.
  conflict-* one per (subject, attribute) of labels/contradictions.jsonl without a supersession
            chain: both sides 2, other claims on the same attribute 1.
  answer-*  one per question topic of labels/answers.jsonl (the same question in the generator's
            different wordings; "Open question: ..." and "TBD: ..." rewritten as questions): the
            answering sources, and every source claiming the same value for the same attribute,
            2; asking sources 1. Skipped when the answers disagree, or the attribute has a
            supersession chain, a contradiction or several claimed values.
  lookup-*  relations (labels/relations.jsonl) asked from either end ("Who is Joanna Brennan's
            manager?", "Who is working on Vortex?"), every source stating one graded 2; and
            attributes with a single claimed value and no chain or contradiction
            (labels/claims.jsonl), every source claiming it graded 2.
At most --max-queries queries in total: state queries first (up to 40% of the cap), then
conflicts (15%), answers (20%), lookups filling the rest; each group is sampled with a seeded
random.Random over its candidates (in label order) when it has more than its share.
"""
import argparse
import json
import random
import re
from collections import OrderedDict, defaultdict
from pathlib import Path

METRICS = {
    "signup_conversion": "signup conversion",
    "trial_to_paid": "trial-to-paid conversion",
    "uptime": "uptime",
    "churn_rate": "churn",
    "error_rate": "error rate",
}


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def pick(options, key):
    """A template chosen by a stable hash of `key` (no PYTHONHASHSEED dependence)."""
    return options[sum(key.encode()) % len(options)]


def key_of(matter):
    """(subject, attribute) of the claims about a supersession matter."""
    subject, _, what = matter.partition("/")
    if what in METRICS or what in {"launch_date", "headcount", "retention_days", "ask_amount",
                                   "valuation_cap", "date", "status", "budget", "owner"}:
        return subject, what
    return matter, "decision"


def ask(subject, attribute, name, mode):
    """A question about `attribute` of the entity called `name` (mode: now / conflict / plain)."""
    now = " now" if mode == "now" else ""
    if attribute == "decision":
        project, _, what = subject.partition("/")
        options = {
            "now": [f"What's the current {what} for {name}?",
                    f"Which {what} did we end up with for {name}?",
                    f"What {what} is {name} using now?"],
            "plain": [f"Which {what} did {name} pick?", f"What {what} does {name} use?"],
        }.get(mode, [f"Which {what} is {name} using? I've seen conflicting reports."])
        return pick(options, subject)
    if attribute in METRICS:
        label = METRICS[attribute]
        if mode == "conflict":
            return f"What's the {label} for {name}? I've seen conflicting reports."
        return pick([f"What's the latest {label} for {name}?",
                     f"Where is {name}'s {label} at{now}?"], subject + attribute)
    doubt = " I've seen conflicting reports." if mode == "conflict" else ""
    text = {
        "launch_date": f"When is the {name} launch{now}?",
        "headcount": f"How many people are on the {name}{now}?",
        "retention_days": f"How long do we keep {name} logs{now}?",
        "ask_amount": f"How much money is {name} putting in{now}?",
        "valuation_cap": f"What valuation cap is {name} offering{now}?",
        "date": f"When is the {name}{now}?",
        "status": f"What's the status of {name}{now}?",
        "budget": f"What's the budget for {name}{now}?",
    }.get(attribute)
    return text + doubt if text else None


RELATION_QUESTIONS = {
    "works_on": "What is {s} working on?",
    "manages": "What does {s} manage?",
    "reports_to": "Who is {s}'s manager?",
    "member_of": "Which team is {s} part of?",
    "owns": "What is {s} responsible for?",
    "located_in": "Where is {s} based?",
    "customer_of": "Whose customer is {s}?",
    "invests_in": "Which companies has {s} invested in?",
}


INVERSE_QUESTIONS = {
    "works_on": "Who is working on {o}?",
    "manages": "Who manages {o}?",
    "reports_to": "Who reports to {o}?",
    "member_of": "Who is on {o}?",
    "customer_of": "Who are {o}'s customers?",
    "invests_in": "Who has invested in {o}?",
}


def the(name):
    """'Data team' -> 'the Data team'; other names unchanged."""
    return "the " + name if name.endswith((" team", " group")) else name


def as_question(text):
    """'Open question: the date for the all-hands.' -> 'What is the date for the all-hands?'"""
    body = re.sub(r"^(Open question|TBD|Question)\s*:\s*", "", text.strip())
    if not body.endswith("?"):
        body = body.rstrip(".")
        if body.startswith("owner for "):
            body = "Who is the " + body + "?"
        elif body.startswith("the "):
            body = "What is " + body + "?"
        elif body.startswith("who "):
            body = body + "?"
        else:
            body = "What about " + body + "?"
    return body[0].upper() + body[1:]


def topic_of(text):
    """The same question however `epigraph gen` words it ('TBD: owner for the X renewal.',
    'Who owns the X renewal?', ...); other texts stand for themselves."""
    t = text.strip().rstrip("?.").replace("Project ", "")
    patterns = [
        (r"(?:owns|driving|owner for) the (.+) renewal", "owner of {}"),
        (r"(?:When is|the date for) the (.+?)(?: happening)?$", "date of {}"),
        (r"(?:retention window for|how long do we keep) (.+) logs", "retention of {}"),
        (r"(?:budget|money) for (.+?) (?:in|on) (.+?)(?: this year)?$", "budget for {} in {}"),
    ]
    for pattern, form in patterns:
        m = re.search(pattern, t)
        if m:
            return form.format(*m.groups())
    return text


def load(gen):
    last = OrderedDict()
    for line in open(gen / "events.jsonl", encoding="utf-8"):
        event = json.loads(line)
        last[event["source_id"]] = event
        last.move_to_end(event["source_id"])
    corpus = {sid: e for sid, e in sorted(last.items()) if e["op"] == "upsert"}
    labels = {name: read_jsonl(gen / "labels" / f"{name}.jsonl")
              for name in ("supersessions", "contradictions", "answers", "relations", "claims",
                           "entities")}
    return corpus, labels


def build(gen, max_queries, seed):
    corpus, labels = load(gen)
    names = {e["entity_id"]: e["canonical"] for e in labels["entities"]}
    live = lambda ref: ref["source_id"] in corpus and ref["text"] in corpus[ref["source_id"]]["body"]
    claims = defaultdict(list)  # (subject, attribute) -> claims in label order
    for c in labels["claims"]:
        if live(c):
            claims[(c["subject"], c["attribute"])].append(c)

    def name_of(subject):
        return names.get(subject.partition("/")[0])

    # State queries: one per superseded matter.
    chains = OrderedDict()
    for s in labels["supersessions"]:
        if live(s["newer"]) and live(s["older"]):
            chains.setdefault(s["matter"], []).append(s)
    state_q = []
    for matter, chain in chains.items():
        key = key_of(matter)
        name = name_of(key[0])
        text = ask(key[0], key[1], name, "now") if name else None
        if not text:
            continue
        head = chain[-1]["newer"]
        head_claim = next((c for c in claims[key] if (c["source_id"], c["text"]) ==
                           (head["source_id"], head["text"])), None)
        rels = {}
        if head_claim:
            later = [c for c in claims[key] if c["valid_from"] > head_claim["valid_from"]]
            if any(c["value"] != head_claim["value"] for c in later):
                continue  # the head is not the last word: ambiguous
            for c in claims[key]:  # a source restating the current value answers it too
                grade = 2 if c["value"] == head_claim["value"] else 1
                rels[c["source_id"]] = max(grade, rels.get(c["source_id"], 0))
        current = head["source_id"]
        chain_sources = {r["source_id"] for s in chain for r in (s["newer"], s["older"])}
        for sid in chain_sources:
            rels.setdefault(sid, 1)
        rels[current] = 2
        pairs = [(current, sid) for sid in sorted(chain_sources) if rels.get(sid) == 1]
        if pairs:
            state_q.append({"text": text, "rels": rels, "pairs": pairs, "kind": "state"})
    state_keys = {key_of(m) for m in chains}

    # Conflict queries: both sides of a contradiction on an attribute without a chain.
    sides = OrderedDict()
    for c in labels["contradictions"]:
        key = (c["subject"], c["attribute"])
        if key not in state_keys and live(c["a"]) and live(c["b"]):
            sides.setdefault(key, set()).update({c["a"]["source_id"], c["b"]["source_id"]})
    conflict_q = []
    for key, srcs in sides.items():
        name = name_of(key[0])
        text = ask(key[0], key[1], name, "conflict") if name else None
        if text:
            rels = {c["source_id"]: 1 for c in claims[key]}
            rels.update({sid: 2 for sid in srcs})
            conflict_q.append({"text": text, "rels": rels, "pairs": [], "kind": "conflict"})

    # Answered questions, merged by topic (the same question asked in different words). Every
    # source claiming an answer's value for the same attribute answers it too. A topic whose
    # answers disagree, or whose attribute has a supersession chain, a contradiction or several
    # claimed values, has no single answer and is skipped (the state/conflict queries cover it).
    claim_at = {(c["source_id"], c["text"]): c for cs in claims.values() for c in cs}
    conflict_keys = {(c["subject"], c["attribute"]) for c in labels["contradictions"]}
    topics = OrderedDict()
    for a in labels["answers"]:
        if live(a["question"]) and live(a["answer"]):
            topics.setdefault(topic_of(a["question"]["text"]), []).append(a)
    asked, answered_keys = OrderedDict(), set()
    for group in topics.values():
        rels, values, keys, ok = {}, set(), set(), True
        for a in group:
            rels.setdefault(a["question"]["source_id"], 1)
        for a in group:
            rels[a["answer"]["source_id"]] = 2
            claim = claim_at.get((a["answer"]["source_id"], a["answer"]["text"]))
            if not claim:
                continue
            values.add(claim["value"])
            key = (claim["subject"], claim["attribute"])
            keys.add(key)
            if key[0] in names:  # an entity's attribute: other sources may state it too
                ok &= key not in state_keys and key not in conflict_keys
                ok &= len({c["value"] for c in claims[key]}) == 1
                rels.update({c["source_id"]: 2 for c in claims[key]})
        if ok and len(values) <= 1:
            asked[as_question(group[0]["question"]["text"])] = rels
            answered_keys |= keys
    answer_q = [{"text": t, "rels": r, "pairs": [], "kind": "answer"} for t, r in asked.items()]

    # Lookups: relations asked both ways, and attributes with a single claimed value.
    stated, stated_by_object = OrderedDict(), OrderedDict()
    for r in labels["relations"]:
        if live(r) and r["subject"] in names and r["object"] in names:
            stated.setdefault((r["subject"], r["predicate"]), set()).add(r["source_id"])
            stated_by_object.setdefault((r["object"], r["predicate"]), set()).add(r["source_id"])
    lookup_q = [{"text": RELATION_QUESTIONS[p].format(s=names[s]),
                 "rels": {sid: 2 for sid in srcs}, "pairs": [], "kind": "lookup"}
                for (s, p), srcs in stated.items() if p in RELATION_QUESTIONS]
    lookup_q += [{"text": INVERSE_QUESTIONS[p].format(o=the(names[o])),
                  "rels": {sid: 2 for sid in srcs}, "pairs": [], "kind": "lookup"}
                 for (o, p), srcs in stated_by_object.items() if p in INVERSE_QUESTIONS]
    for key, cs in claims.items():
        name = name_of(key[0])
        if (name and key not in state_keys | conflict_keys | answered_keys
                and len({c["value"] for c in cs}) == 1):
            text = ask(key[0], key[1], name, "plain")
            if text:
                lookup_q.append({"text": text, "rels": {c["source_id"]: 2 for c in cs},
                                 "pairs": [], "kind": "lookup"})

    # Sample each group to its share of the cap; drop duplicate texts (first one wins).
    rng = random.Random(seed)
    queries, seen = [], set()
    budget = {"state": int(0.4 * max_queries), "conflict": int(0.15 * max_queries),
              "answer": int(0.2 * max_queries)}
    for group in (state_q, conflict_q, answer_q, lookup_q):
        group = [q for q in group if q["text"] not in seen]
        kind = group[0]["kind"] if group else None
        share = budget.get(kind, max_queries - len(queries))
        if len(group) > share:
            keep = set(rng.sample(range(len(group)), share))
            group = [q for i, q in enumerate(group) if i in keep]
        for n, q in enumerate(group, 1):
            q["_id"] = f"{q['kind']}-{n:03d}"
            seen.add(q["text"])
            queries.append(q)
    return corpus, queries


def write(out, corpus, queries):
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    with open(out / "corpus.jsonl", "w", encoding="utf-8") as f:
        for sid, e in corpus.items():
            metadata = {"occurred_at": e["occurred_at"], "kind": e["kind"]}
            # A revised document says when each of its units was written.
            if e.get("extras", {}).get("written"):
                metadata["written"] = e["extras"]["written"]
            doc = {"_id": sid, "title": e["title"], "text": e["body"], "metadata": metadata}
            f.write(json.dumps(doc, ensure_ascii=False) + "\n")
    with open(out / "queries.jsonl", "w", encoding="utf-8") as f:
        for q in queries:
            f.write(json.dumps({"_id": q["_id"], "text": q["text"],
                                "metadata": {"kind": q["kind"]}}, ensure_ascii=False) + "\n")
    with open(out / "qrels" / "test.tsv", "w", encoding="utf-8") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for q in queries:
            for sid, grade in sorted(q["rels"].items()):
                f.write(f"{q['_id']}\t{sid}\t{grade}\n")
    with open(out / "state.jsonl", "w", encoding="utf-8") as f:
        for q in queries:
            for current, superseded in q["pairs"]:
                f.write(json.dumps({"query_id": q["_id"], "current": current,
                                    "superseded": superseded}) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("gen_dir", type=Path)
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--max-queries", type=int, default=150)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    corpus, queries = build(args.gen_dir, args.max_queries, args.seed)
    write(args.out_dir, corpus, queries)
    kinds = defaultdict(int)
    for q in queries:
        kinds[q["kind"]] += 1
    pairs = sum(len(q["pairs"]) for q in queries)
    size = sum(len(e["body"].encode("utf-8")) for e in corpus.values())
    print(f"{len(corpus)} documents ({size} bytes of text), {len(queries)} queries "
          f"{dict(kinds)}, {pairs} state pairs -> {args.out_dir}")


if __name__ == "__main__":
    main()
