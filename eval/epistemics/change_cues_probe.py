#!/usr/bin/env python3
"""A probe, not a rule: how far would "a later KEP says it changes an identifier an earlier KEP
introduced" go towards document-level SUPERSEDES on the labelled KEP sets?

For every sentence of a later KEP's README that carries a change cue (a regex alternative of the
first argument, e.g. 'deprecated in favou?r of|relax|mutable|will be ignored') and names an
identifier (a code span or a CamelCase word, the pattern of operators/src/epistemic/extensions.rs)
found in at most MAXDF (default 3) KEPs of the split, predict `later SUPERSEDES earliest earlier
KEP whose README holds that identifier`. Sentences of headings, tables of contents and (with
SKIP, a regex) the rollback/upgrade questionnaire are left out. Scored like
`epigraph eval epistemics --keps` at the document-pair level over the judged pairs of every set
that has been read (keps, keps2, keps3, keps4; never keps5 unless K5=1).

    python3 eval/epistemics/change_cues_probe.py 'deprecated in favou?r of|relax|mutable'
    V=1 SKIP='disabl|rollback|roll back|downgrad|upgrad' python3 eval/epistemics/change_cues_probe.py '…'

Sentences are cut naively from the README (no memory objects, no kep.yaml header), so it
approximates what the dataflow would see. Findings: docs/epistemics.md, "Supersession by
changed identifiers: probed, not built".
"""
import collections
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, '..', '..', 'tests', 'fixtures', 'keps', 'keps')
IDENT = re.compile(r"`([^`]{2,60})`|\b([A-Z][a-z]+(?:[A-Z][a-z0-9]*)+|[A-Z]{2,}[a-z]+\w*)\b")


def number(kep):
    return int(re.match(r'(\d+)', kep.split('/')[1]).group(1))


def readme(kep):
    text = open(os.path.join(ROOT, kep, 'README.md')).read()
    return re.sub(r'<!--.*?-->', '', text, flags=re.S)


def sentences(text):
    out = []
    for para in re.split(r'\n\s*\n', text):
        para = ' '.join(line.strip() for line in para.splitlines())
        out.extend(s for s in re.split(r'(?<=[.!?])\s+(?=[A-Z`])', para) if s)
    return out


def identifiers(sentence):
    found = set()
    for m in IDENT.finditer(sentence):
        ident = m.group(1) or m.group(2)
        if m.group(1) and ('/' in ident or ident.startswith('-') or ' ' in ident):
            continue
        if len(ident) >= 4:
            found.add(ident)
    return found


def main():
    cues = [c.strip() for c in sys.argv[1].split('|')] if len(sys.argv) > 1 else []
    max_df = int(os.environ.get('MAXDF', '3'))
    skip = os.environ.get('SKIP', '$^')
    sets = ['keps', 'keps2', 'keps3', 'keps4'] + (['keps5'] if os.environ.get('K5') else [])
    total = collections.Counter()
    for name in sets:
        folder = os.path.join(HERE, name)
        groups = [json.loads(line) for line in open(os.path.join(folder, 'groups.jsonl'))]
        for split in sorted({g['split'] for g in groups}):
            keps = [k for g in groups if g['split'] == split for k in g['keps']]
            group_of = {k: g['group'] for g in groups if g['split'] == split for k in g['keps']}
            said = {k: sentences(readme(k)) for k in keps}
            named = {k: set().union(*[identifiers(s) for s in said[k]]) for k in keps}
            df = collections.Counter(i for k in keps for i in named[k])
            labels = collections.defaultdict(set)
            for line in open(os.path.join(folder, 'labels.jsonl')):
                label = json.loads(line)
                labels[(label['from'], label['to'])].add(label['relation'])
            gold = {p for p, r in labels.items() if 'SUPERSEDES' in r and p[0] in group_of}
            predicted = {}
            for later in keps:
                for s in said[later]:
                    low = s.lower()
                    if s.lstrip().startswith('#') or s.count('](#') >= 2 or re.search(skip, low):
                        continue
                    cue = next((c for c in cues if re.search(c, low)), None)
                    if not cue:
                        continue
                    for ident in identifiers(s):
                        if df[ident] > max_df:
                            continue
                        earlier = [k for k in keps
                                   if k != later and ident in named[k] and number(k) < number(later)]
                        if earlier:
                            pair = (later, min(earlier, key=number))
                            predicted.setdefault(pair, (cue, ident, s[:200]))
            judged = {p: v for p, v in predicted.items() if group_of[p[0]] == group_of[p[1]]}
            correct = [p for p in judged if p in gold]
            total.update(pred=len(judged), ok=len(correct), gold=len(gold),
                         unjudged=len(predicted) - len(judged))
            print(f'== {name}/{split}: gold {len(gold)} predicted {len(judged)} correct {len(correct)} '
                  f'unjudged {len(predicted) - len(judged)}')
            if os.environ.get('V'):
                for p, v in judged.items():
                    mark = 'OK' if p in gold else 'x '
                    print('  ', mark, p[0].split('/')[1][:30], '->', p[1].split('/')[1][:30],
                          sorted(labels.get(p, [])), v)
    print(dict(total), 'P=%.2f R=%.2f' % (total['ok'] / max(1, total['pred']),
                                          total['ok'] / max(1, total['gold'])))


if __name__ == '__main__':
    main()
