use std::collections::BTreeMap;
use std::sync::Arc;

use differential_dataflow::input::Input;
use epigraph_schemas::{Party, SourceKind};
use timely::dataflow::operators::capture::{Capture, Extract};

use crate::extract::Extractor;
use crate::graph::extract_graph_with_verdicts;
use crate::model::{GraphElement, MemoryObject, SourceVersion, Standing};
use crate::resolve::Verdict;

const DAY: i64 = 86_400_000;

pub(super) fn source(id: &str, kind: SourceKind, day: i64, body: &str) -> SourceVersion {
    let mut s = SourceVersion::new("t", id, kind, body);
    s.occurred_at = Some(day * DAY);
    s.recorded_at = Some(day * DAY + 1_000);
    s
}

type Round = (Vec<(SourceVersion, isize)>, Vec<(Verdict, isize)>);

/// The live graph after each round of updates, run incrementally in one dataflow.
pub(super) fn rounds(rounds: Vec<Round>) -> Vec<Vec<GraphElement>> {
    let n = rounds.len();
    let captured = timely::execute_directly(move |worker| {
        let (mut sources, mut verdicts, captured) = worker.dataflow::<u64, _, _>(|scope| {
            let (s_in, sources) = scope.new_collection::<SourceVersion, isize>();
            let (v_in, verdicts) = scope.new_collection::<Verdict, isize>();
            let out =
                extract_graph_with_verdicts(sources, verdicts, Arc::new(Extractor::bundled()))
                    .consolidate()
                    .inner
                    .capture();
            (s_in, v_in, out)
        });
        for (t, (s, v)) in rounds.into_iter().enumerate() {
            sources.advance_to(t as u64);
            verdicts.advance_to(t as u64);
            for (x, d) in s {
                sources.update(x, d);
            }
            for (x, d) in v {
                verdicts.update(x, d);
            }
        }
        sources.close();
        verdicts.close();
        while worker.step() {}
        captured
    });
    let mut at: Vec<Vec<(GraphElement, isize)>> = vec![Vec::new(); n];
    for (_, updates) in captured.extract() {
        for (e, t, d) in updates {
            at[t as usize].push((e, d));
        }
    }
    let mut net: BTreeMap<GraphElement, isize> = BTreeMap::new();
    let mut out = Vec::new();
    for updates in at {
        for (e, d) in updates {
            *net.entry(e).or_default() += d;
        }
        net.retain(|_, d| *d != 0);
        assert!(net.values().all(|d| *d == 1), "every live element once");
        out.push(net.keys().cloned().collect());
    }
    out
}

pub(super) fn graph(sources: Vec<SourceVersion>, verdicts: Vec<Verdict>) -> Vec<GraphElement> {
    rounds(vec![(ones(sources), ones(verdicts))]).pop().unwrap()
}

fn ones<X>(items: Vec<X>) -> Vec<(X, isize)> {
    items.into_iter().map(|x| (x, 1)).collect()
}

pub(super) fn memories(elements: &[GraphElement]) -> BTreeMap<String, MemoryObject> {
    elements
        .iter()
        .filter_map(|e| match e {
            GraphElement::Memory(m) => Some((m.text.clone(), m.clone())),
            _ => None,
        })
        .collect()
}

/// `(rel_type, from text, to text)` of the judged edges between memory objects.
fn links(elements: &[GraphElement]) -> Vec<(String, String, String)> {
    let by_id: BTreeMap<&str, &str> = elements
        .iter()
        .filter_map(|e| match e {
            GraphElement::Memory(m) => Some((m.id.as_str(), m.text.as_str())),
            _ => None,
        })
        .collect();
    let mut out: Vec<_> = elements
        .iter()
        .filter_map(|e| match e {
            GraphElement::Relation(r)
                if ["SUPERSEDES", "CONTRADICTS", "ANSWERS"].contains(&r.rel_type.as_str()) =>
            {
                Some((
                    r.rel_type.clone(),
                    by_id[r.from.as_str()].to_string(),
                    by_id[r.to.as_str()].to_string(),
                ))
            }
            _ => None,
        })
        .collect();
    out.sort();
    out
}

fn claims_of<'a>(elements: &'a [GraphElement], text: &str) -> Vec<&'a crate::model::Claim> {
    let memory = memories(elements)[text].id.clone();
    elements
        .iter()
        .filter_map(|e| match e {
            GraphElement::Claim(c) if c.memory_id == memory => Some(c),
            _ => None,
        })
        .collect()
}

pub(super) fn relation<'a>(
    elements: &'a [GraphElement],
    rel_type: &str,
) -> Vec<&'a crate::model::Relation> {
    elements
        .iter()
        .filter_map(|e| match e {
            GraphElement::Relation(r) if r.rel_type == rel_type => Some(r),
            _ => None,
        })
        .collect()
}

const PLANNED: &str = "Project Atlas launch is planned for May 13, 2027.";
const SLIPPED: &str = "Heads up, the Project Atlas launch slips to June 3, 2027.";

#[test]
fn a_statement_kept_through_a_revision_is_valid_from_when_it_was_written() {
    // The plan was written on day 1, the slip on day 5; the document was revised on day 9 (a
    // note appended). Its `written` spans keep the plan at day 1, so the slip replaces it.
    let body = format!("{PLANNED}\n\nNote: the venue is booked.");
    let revised = |written: bool| {
        let mut doc = source("plan.md", SourceKind::Document, 9, &body);
        if written {
            let plan = PLANNED.chars().count() as u32;
            doc.written = crate::model::WrittenSpan::parse(&format!(
                "0-{plan}@{}; {}-{}@{}",
                DAY,
                plan + 2,
                body.chars().count(),
                9 * DAY
            ));
        }
        doc
    };
    let slip = source("b", SourceKind::Chat, 5, SLIPPED);
    let elements = graph(vec![revised(true), slip.clone()], vec![]);
    let m = memories(&elements);
    assert_eq!(m[PLANNED].t_valid, Some(DAY));
    assert_eq!(m[PLANNED].standing, Standing::Superseded);
    assert_eq!(m[SLIPPED].standing, Standing::Current);
    // Without the spans the whole revision dates from day 9, and the plan looks newer.
    let elements = graph(vec![revised(false), slip], vec![]);
    let m = memories(&elements);
    assert_eq!(m[PLANNED].t_valid, Some(9 * DAY));
    assert_eq!(m[SLIPPED].standing, Standing::Superseded);
}

#[test]
fn a_slipped_launch_supersedes_the_planned_date_with_valid_and_recorded_time() {
    let elements = graph(
        vec![
            source("a", SourceKind::Chat, 1, PLANNED),
            source("b", SourceKind::Chat, 9, SLIPPED),
        ],
        vec![],
    );
    let m = memories(&elements);
    assert_eq!(m[PLANNED].standing, Standing::Superseded);
    assert_eq!(m[PLANNED].t_invalid, Some(9 * DAY), "invalid from the slip");
    assert_eq!(m[SLIPPED].standing, Standing::Current);
    assert_eq!(m[SLIPPED].t_invalid, None);
    let old = claims_of(&elements, PLANNED);
    assert_eq!(old.len(), 1);
    assert_eq!(
        (old[0].attribute.as_str(), old[0].value.as_str()),
        ("launch_date", "2027-05-13")
    );
    assert_eq!(
        (old[0].standing, old[0].t_invalid),
        (Standing::Superseded, Some(9 * DAY))
    );
    let new = claims_of(&elements, SLIPPED);
    assert_eq!(
        (new[0].standing, new[0].t_invalid),
        (Standing::Current, None)
    );
    assert_eq!(
        links(&elements),
        [(
            "SUPERSEDES".to_string(),
            SLIPPED.to_string(),
            PLANNED.to_string()
        )]
    );
    let edge = relation(&elements, "SUPERSEDES")[0];
    assert_eq!(
        (edge.t_valid, edge.t_invalid, edge.recorded_at),
        (Some(9 * DAY), None, Some(9 * DAY + 1_000)),
        "valid from the newer statement, recorded when the later side was"
    );
    assert_eq!(
        edge.evidence,
        ["launch_date: 2027-06-03 replaces 2027-05-13 (the later statement says it updates)"],
        "why it was drawn"
    );
    // Bi-temporal nodes: entities are valid and recorded from their first source.
    let atlas = elements
        .iter()
        .find_map(|e| match e {
            GraphElement::Entity(n) if n.name.contains("Atlas") => Some(n),
            _ => None,
        })
        .expect("Atlas is an entity");
    assert_eq!(
        (atlas.t_valid, atlas.recorded_at),
        (Some(DAY), Some(DAY + 1_000))
    );
}

const SHEET: &str = "Term sheet from Lighthouse Fund: €320K SAFE at a €2.2M cap.";
const MEMO: &str = "Internal memo: the Lighthouse Fund round is €200K with a €2.3M cap.";

#[test]
fn a_term_sheet_and_a_memo_that_disagree_contradict_each_other_and_both_stay_current() {
    let elements = graph(
        vec![
            source("docs/term-sheet.md", SourceKind::Document, 10, SHEET),
            source("mail/memo", SourceKind::Email, 12, MEMO),
        ],
        vec![],
    );
    let m = memories(&elements);
    assert_eq!(m[SHEET].standing, Standing::Current);
    assert_eq!(m[MEMO].standing, Standing::Current);
    assert_eq!(
        links(&elements),
        [
            (
                "CONTRADICTS".to_string(),
                MEMO.to_string(),
                SHEET.to_string()
            ),
            (
                "CONTRADICTS".to_string(),
                SHEET.to_string(),
                MEMO.to_string()
            ),
        ],
        "one pair, each side pointing to the other (the amount and the cap both disagree)"
    );
    for c in claims_of(&elements, SHEET)
        .into_iter()
        .chain(claims_of(&elements, MEMO))
    {
        assert_eq!(
            (c.standing, c.t_invalid),
            (Standing::Current, None),
            "{c:?}"
        );
    }
    let attributes: Vec<_> = claims_of(&elements, SHEET)
        .iter()
        .map(|c| c.attribute.clone())
        .collect();
    assert_eq!(attributes, ["ask_amount", "valuation_cap"]);
}

#[test]
fn agreeing_values_and_the_same_source_never_contradict() {
    let elements = graph(
        vec![
            source("docs/a.md", SourceKind::Document, 10, SHEET),
            source(
                "mail/b",
                SourceKind::Email,
                11,
                "Term sheet from Lighthouse Fund: €320K SAFE at a €2.2M cap, confirmed.",
            ),
            source(
                "docs/c.md",
                SourceKind::Document,
                12,
                "Term sheet from Lighthouse Fund: €320K SAFE at a €2.2M cap.\n\nInternal memo: the Lighthouse Fund round is €200K with a €2.3M cap.",
            ),
        ],
        vec![],
    );
    // The memo disagrees with the two sheets of the other sources (an edge each way per pair);
    // the sheets agree with each other, and the sheet next to the memo in docs/c.md is never
    // paired with it.
    let source_of: BTreeMap<&str, &str> = elements
        .iter()
        .filter_map(|e| match e {
            GraphElement::Memory(m) => Some((m.id.as_str(), m.source_id.as_str())),
            _ => None,
        })
        .collect();
    let mut pairs: Vec<(&str, &str)> = relation(&elements, "CONTRADICTS")
        .into_iter()
        .map(|r| (source_of[r.from.as_str()], source_of[r.to.as_str()]))
        .collect();
    pairs.sort();
    assert_eq!(
        pairs,
        [
            ("docs/a.md", "docs/c.md"),
            ("docs/c.md", "docs/a.md"),
            ("docs/c.md", "mail/b"),
            ("mail/b", "docs/c.md"),
        ],
        "{:#?}",
        links(&elements)
    );
    for (_, from, to) in links(&elements) {
        assert!(
            from == MEMO || to == MEMO,
            "only the memo disagrees: {from} / {to}"
        );
    }
}

#[test]
fn a_disagreement_long_after_replaces_instead_of_contradicting() {
    let early = "HR's sheet has the Legal team at 10 people.";
    let late = "The Legal team is 22 people today.";
    let elements = graph(
        vec![
            source("a", SourceKind::Chat, 1, early),
            source("b", SourceKind::Chat, 120, late),
        ],
        vec![],
    );
    assert_eq!(
        links(&elements),
        [(
            "SUPERSEDES".to_string(),
            late.to_string(),
            early.to_string()
        )]
    );
    let within = graph(
        vec![
            source("a", SourceKind::Chat, 1, early),
            source("b", SourceKind::Chat, 5, late),
        ],
        vec![],
    );
    assert_eq!(
        relation(&within, "CONTRADICTS").len(),
        2,
        "{:#?}",
        links(&within)
    );
}

const DB: &str = "Decision: Project Tidewater goes with MySQL for the primary database.";
const REGION: &str = "Decision: Project Tidewater goes with eu-west-1 for the hosting region.";
const REVERSAL: &str = "We are reversing the earlier call on the Project Tidewater primary database: Postgres instead of MySQL.";

#[test]
fn a_later_decision_on_the_same_matter_supersedes_only_that_matter() {
    let elements = graph(
        vec![
            source("chat/1", SourceKind::Chat, 1, DB),
            source("chat/2", SourceKind::Chat, 2, REGION),
            source("docs/adr.md", SourceKind::Document, 30, REVERSAL),
        ],
        vec![],
    );
    assert_eq!(
        links(&elements),
        [(
            "SUPERSEDES".to_string(),
            REVERSAL.to_string(),
            DB.to_string()
        )]
    );
    let m = memories(&elements);
    assert_eq!(
        (m[DB].standing, m[DB].t_invalid),
        (Standing::Superseded, Some(30 * DAY))
    );
    assert_eq!(m[REGION].standing, Standing::Current, "another matter");
    assert_eq!(m[REVERSAL].standing, Standing::Current);
    // Drawn by the claim timeline of the choice (the reversal states its choice).
    assert_eq!(
        relation(&elements, "SUPERSEDES")[0].evidence,
        [
            "the choice of primary database: postgres replaces mysql (the later statement says it updates)"
        ]
    );
}

const QUESTION: &str = "Who owns the BlueWave renewal?";
const ANSWER: &str = "Mateo Rossi will own the BlueWave renewal.";

/// [`ANSWER`] in chat on day 4, written by Mateo Rossi himself.
fn answer_on_day_4() -> SourceVersion {
    let mut answer = source("chat/a", SourceKind::Chat, 4, ANSWER);
    answer.authors = vec![Party {
        name: Some("Mateo Rossi".into()),
        address: Some("mateo@bluewave.example".into()),
    }];
    answer
}

#[test]
fn a_later_statement_answers_an_open_question_and_closes_it() {
    let open = graph(
        vec![source("chat/q", SourceKind::Chat, 1, QUESTION)],
        vec![],
    );
    assert_eq!(memories(&open)[QUESTION].standing, Standing::Open);
    let answer = answer_on_day_4();
    let elements = graph(
        vec![
            source("chat/q", SourceKind::Chat, 1, QUESTION),
            source(
                "chat/x",
                SourceKind::Chat,
                2,
                "The BlueWave renewal call went long.",
            ),
            answer,
        ],
        vec![],
    );
    assert_eq!(
        links(&elements),
        [(
            "ANSWERS".to_string(),
            ANSWER.to_string(),
            QUESTION.to_string()
        )]
    );
    let q = &memories(&elements)[QUESTION];
    assert_eq!(
        (q.standing, q.t_invalid),
        (Standing::Answered, Some(4 * DAY))
    );
    assert_eq!(
        relation(&elements, "ANSWERS")[0].evidence,
        [
            "names BlueWave, shares own, renewal with the question and carries the person it asks for (confidence 1.00)"
        ]
    );
}

#[test]
fn an_open_question_is_answered_by_a_statement_that_takes_it_up_not_by_one_sharing_two_words() {
    let question = "Should Project Atlas accept uploads that do not declare a character encoding?";
    let aside = "Project Atlas uploads now show a character count.";
    let answer = "Project Atlas will accept uploads without a declared character encoding and read them as UTF-8.";
    let elements = graph(
        vec![
            source("docs/q.md", SourceKind::Document, 1, question),
            source("docs/aside.md", SourceKind::Document, 3, aside),
            source("docs/answer.md", SourceKind::Document, 5, answer),
        ],
        vec![],
    );
    // The aside shares two topic words across documents, which the word rules alone took for
    // an answer; it repeats too little of what the question asks about.
    assert_eq!(
        links(&elements),
        [(
            "ANSWERS".to_string(),
            answer.to_string(),
            question.to_string()
        )]
    );
    assert_eq!(memories(&elements)[question].standing, Standing::Answered);
    let why = &relation(&elements, "ANSWERS")[0].evidence;
    assert!(why[0].ends_with("(confidence 0.80)"), "{why:?}");

    // Without the answer, the question stays open.
    let open = graph(
        vec![
            source("docs/q.md", SourceKind::Document, 1, question),
            source("docs/aside.md", SourceKind::Document, 3, aside),
        ],
        vec![],
    );
    assert!(links(&open).is_empty());
    assert_eq!(memories(&open)[question].standing, Standing::Open);
}

#[test]
fn a_same_verdict_joins_two_subjects_and_withdrawing_it_restores_the_graph_exactly() {
    let atlas = "The Project Atlas budget is $450K for the year.";
    let nimbus = "Finance puts the Project Nimbus budget at $570K.";
    let sources = vec![
        (source("docs/a.md", SourceKind::Document, 10, atlas), 1),
        (source("mail/b", SourceKind::Email, 12, nimbus), 1),
    ];
    let entity = |name: &str| crate::extract::entity_id("t", "Project", name);
    let verdict = Verdict {
        tenant: "t".into(),
        a: entity("atlas"),
        b: entity("nimbus"),
        same: true,
    };
    let result = rounds(vec![
        (sources, vec![]),
        (vec![], vec![(verdict.clone(), 1)]),
        (vec![], vec![(verdict, -1)]),
    ]);
    assert!(
        relation(&result[0], "CONTRADICTS").is_empty(),
        "two subjects"
    );
    assert_eq!(
        links(&result[1]),
        [
            (
                "CONTRADICTS".to_string(),
                nimbus.to_string(),
                atlas.to_string()
            ),
            (
                "CONTRADICTS".to_string(),
                atlas.to_string(),
                nimbus.to_string()
            ),
        ],
        "one subject once a reviewer says they are the same project"
    );
    assert_eq!(
        result[2], result[0],
        "withdrawing the verdict restores every element"
    );
}

#[test]
fn deleting_the_newer_source_makes_the_older_claim_current_again() {
    let result = rounds(vec![
        (
            ones(vec![source("a", SourceKind::Chat, 1, PLANNED)]),
            vec![],
        ),
        (
            ones(vec![source("b", SourceKind::Chat, 9, SLIPPED)]),
            vec![],
        ),
        (
            vec![(source("b", SourceKind::Chat, 9, SLIPPED), -1)],
            vec![],
        ),
    ]);
    assert_eq!(memories(&result[1])[PLANNED].standing, Standing::Superseded);
    assert_eq!(
        result[2], result[0],
        "the delete retracts exactly what the slip caused"
    );
}

/// Random histories of inserts, edits, deletes and verdicts over statements that supersede,
/// contradict and answer each other: the incremental graph after the last round equals the
/// graph computed from scratch on the final inputs.
#[test]
fn incremental_equals_from_scratch_on_random_histories() {
    let texts = [
        PLANNED,
        SLIPPED,
        "Project Atlas launch moved to July 1, 2027.",
        SHEET,
        MEMO,
        "Per the internal memo, Lighthouse Fund is in for €320K at a €2.2M cap.",
        DB,
        REGION,
        REVERSAL,
        QUESTION,
        ANSWER,
        "The Project Atlas budget is $450K for the year.",
        "Finance puts the Project Nimbus budget at $570K.",
        "When is the Project Atlas launch?",
        "Is there money for SSO on Project Nimbus this year?",
        "On SSO for Project Nimbus: $130K is set aside.",
    ];
    let entity = |name: &str| crate::extract::entity_id("t", "Project", name);
    let projects = [entity("atlas"), entity("nimbus"), entity("tidewater")];
    let mut state: u64 = 7;
    let mut next = move |n: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) as usize) % n
    };
    for history in 0..12 {
        let mut live: BTreeMap<String, SourceVersion> = BTreeMap::new();
        let mut verdicts: BTreeMap<Verdict, ()> = BTreeMap::new();
        let mut history_rounds: Vec<Round> = Vec::new();
        for _ in 0..5 {
            let (mut s, mut v) = (Vec::new(), Vec::new());
            for _ in 0..3 {
                let id = format!("s{}", next(6));
                let kind = [SourceKind::Chat, SourceKind::Email, SourceKind::Document][next(3)];
                if let Some(old) = live.remove(&id) {
                    s.push((old, -1));
                    if next(3) == 0 {
                        continue; // a delete
                    }
                }
                let body = texts[next(texts.len())];
                let version = source(&id, kind, 1 + next(90) as i64, body);
                live.insert(id, version.clone());
                s.push((version, 1));
            }
            if next(3) == 0 {
                let verdict = Verdict {
                    tenant: "t".into(),
                    a: projects[next(3)].clone(),
                    b: projects[next(3)].clone(),
                    same: next(2) == 0,
                };
                if verdicts.remove(&verdict).is_some() {
                    v.push((verdict, -1));
                } else {
                    verdicts.insert(verdict.clone(), ());
                    v.push((verdict, 1));
                }
            }
            history_rounds.push((s, v));
        }
        let incremental = rounds(history_rounds).pop().unwrap();
        let scratch = rounds(vec![(
            ones(live.into_values().collect()),
            ones(verdicts.into_keys().collect()),
        )])
        .pop()
        .unwrap();
        assert_eq!(incremental, scratch, "history {history}");
    }
}

#[test]
fn a_relative_date_in_chat_supersedes_an_absolute_one_and_a_vaguer_one_agrees() {
    // Day 20,794 is Monday 2026-12-07.
    let planned = "Project Atlas launch is planned for December 11, 2026.";
    let slipped = "Heads up, the Project Atlas launch slips to next Tuesday.";
    let vaguer = "The Project Atlas launch is in December 2026 as far as sales know.";
    let elements = graph(
        vec![
            source("a", SourceKind::Chat, 20_794, planned),
            source("b", SourceKind::Chat, 20_796, slipped),
            source("c", SourceKind::Email, 20_795, vaguer),
        ],
        vec![],
    );
    let new = claims_of(&elements, slipped);
    assert_eq!(
        (new[0].attribute.as_str(), new[0].value.as_str()),
        ("launch_date", "2026-12-15"),
        "Wednesday's \"next Tuesday\""
    );
    let m = memories(&elements);
    assert_eq!(m[planned].standing, Standing::Superseded);
    assert_eq!(m[slipped].standing, Standing::Current);
    // "December 2026" holds both days: it neither contradicts nor is replaced by them.
    let vague = claims_of(&elements, vaguer);
    assert_eq!(
        (vague[0].attribute.as_str(), vague[0].value.as_str()),
        ("launch_date", "2026-12")
    );
    assert_eq!(m[vaguer].standing, Standing::Current);
    assert!(
        relation(&elements, "CONTRADICTS").is_empty(),
        "{elements:?}"
    );
}

/// `(question, blocked statement, t_valid, t_invalid)` of every `BLOCKS` edge.
fn blocks(elements: &[GraphElement]) -> Vec<(String, String, Option<i64>, Option<i64>)> {
    let m: BTreeMap<String, String> = memories(elements)
        .into_values()
        .map(|m| (m.id, m.text))
        .collect();
    let mut out: Vec<_> = relation(elements, "BLOCKS")
        .into_iter()
        .map(|r| (m[&r.from].clone(), m[&r.to].clone(), r.t_valid, r.t_invalid))
        .collect();
    out.sort();
    out
}

const HELD: &str = "Heads up: the BlueWave renewal paperwork is blocked until we know who owns it.";

#[test]
fn an_open_question_blocks_a_held_up_statement_until_it_is_answered_and_retractions_undo_it() {
    let answer = answer_on_day_4();
    let question = source("chat/q", SourceKind::Chat, 1, QUESTION);
    let held = source("chat/h", SourceKind::Chat, 2, HELD);
    let noise = source(
        "chat/x",
        SourceKind::Chat,
        3,
        "The BlueWave offsite is on hold until we know the venue.",
    );
    let result = rounds(vec![
        (ones(vec![question, held.clone(), noise]), vec![]),
        (ones(vec![answer.clone()]), vec![]),
        (vec![(answer, -1)], vec![]),
        (vec![(held, -1)], vec![]),
    ]);
    let open = (QUESTION.to_string(), HELD.to_string(), Some(2 * DAY), None);
    // Held up by the question it shares "renewal" with; the offsite shares nothing with it.
    assert_eq!(blocks(&result[0]), std::slice::from_ref(&open));
    // Answered on day 4: the block has ended then, and is kept as history.
    let ended = (open.0.clone(), open.1.clone(), open.2, Some(4 * DAY));
    assert_eq!(blocks(&result[1]), [ended]);
    assert_eq!(memories(&result[1])[QUESTION].standing, Standing::Answered);
    // Retracting the answer restores the first graph exactly; retracting the held statement
    // removes the edge.
    assert_eq!(result[2], result[0]);
    assert!(blocks(&result[3]).is_empty(), "{:?}", blocks(&result[3]));
}

#[test]
fn a_question_answered_before_the_statement_was_written_blocks_nothing() {
    let answer = answer_on_day_4();
    let elements = graph(
        vec![
            source("chat/q", SourceKind::Chat, 1, QUESTION),
            answer,
            source("chat/h", SourceKind::Chat, 6, HELD),
        ],
        vec![],
    );
    assert!(blocks(&elements).is_empty(), "{:?}", blocks(&elements));
    assert_eq!(
        memories(&elements)[QUESTION].t_invalid,
        Some(4 * DAY),
        "answered on day 4"
    );
}

#[test]
fn in_the_bundled_sample_the_open_on_call_question_blocks_the_runbook() {
    let notes = include_str!("../../../../samples/docs/meetings/2026-09-02-launch-sync.md");
    let elements = graph(
        vec![source(
            "docs/meetings/2026-09-02-launch-sync.md",
            SourceKind::Document,
            1,
            notes,
        )],
        vec![],
    );
    assert_eq!(
        blocks(&elements),
        [(
            "Who owns the on-call rotation for the ingestion pipeline?".to_string(),
            "The on-call runbook for the ingestion pipeline is on hold until we know who owns the rotation."
                .to_string(),
            Some(DAY),
            None
        )]
    );
}

/// A document of the bundled sample, titled and dated as the documents source reads it.
fn sample(path: &str, title: &str, day: i64, body: &str) -> SourceVersion {
    let mut s = source(path, SourceKind::Document, day, body);
    s.title = Some(title.to_string());
    s
}

const SAMPLE_SHEET: &str = include_str!("../../../../samples/docs/plans/term-sheet-summary.md");
const SAMPLE_MEMO: &str =
    include_str!("../../../../samples/docs/meetings/2026-10-07-board-memo.md");

#[test]
fn in_the_bundled_sample_the_seed_round_figures_contradict_across_documents() {
    // The term sheet names no entity in its figures ("Investment: €320K SAFE with a €2.2M
    // valuation cap."): its claims have the title as subject. The memo's name Fjord Ventures.
    // They meet on the matter: both contexts name Fjord Ventures.
    let sheet = || {
        sample(
            "plans/term-sheet-summary.md",
            "Term sheet summary (Fjord Ventures)",
            12,
            SAMPLE_SHEET,
        )
    };
    let memo = || {
        sample(
            "meetings/2026-10-07-board-memo.md",
            "Internal memo: seed round status",
            7,
            SAMPLE_MEMO,
        )
    };
    let states = rounds(vec![
        (ones(vec![sheet(), memo()]), vec![]),
        (vec![(memo(), -1)], vec![]),
        (vec![(memo(), 1)], vec![]),
    ]);
    let investment = "Investment: €320K SAFE with a €2.2M valuation cap.";
    let seed = "The seed round is €200K on a SAFE at a €2.3M valuation cap, led by Fjord Ventures.";
    let pair = [
        (
            "CONTRADICTS".to_string(),
            investment.to_string(),
            seed.to_string(),
        ),
        (
            "CONTRADICTS".to_string(),
            seed.to_string(),
            investment.to_string(),
        ),
    ];
    let contradictions = |elements: &[GraphElement]| -> Vec<(String, String, String)> {
        links(elements)
            .into_iter()
            .filter(|(kind, ..)| kind == "CONTRADICTS")
            .collect()
    };
    assert_eq!(contradictions(&states[0]), pair, "{:#?}", links(&states[0]));
    // One edge each way (two figures disagree, one edge), saying on what matter the documents
    // met and which values disagree.
    let reasons: Vec<Vec<String>> = states[0]
        .iter()
        .filter_map(|e| match e {
            GraphElement::Relation(r) if r.rel_type == "CONTRADICTS" => Some(r.evidence.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    for why in &reasons {
        assert!(
            why.iter().all(|w| w.contains(" on the matter \"")),
            "{why:?}"
        );
        assert!(
            why.iter().any(|w| w.starts_with("ask_amount")
                && w.contains("320000 EUR")
                && w.contains("200000 EUR")),
            "{why:?}"
        );
    }
    let m = memories(&states[0]);
    assert_eq!(m[investment].standing, Standing::Current);
    assert_eq!(m[seed].standing, Standing::Current);
    assert!(
        contradictions(&states[1]).is_empty(),
        "retracted with the memo"
    );
    assert_eq!(contradictions(&states[2]), pair, "and back with it");
}

#[test]
fn claims_of_different_documents_meet_by_matter_only_when_their_contexts_share_it() {
    // Two pitches of two companies: the same attribute, nothing shared but cue words.
    let elements = graph(
        vec![
            sample("docs/acme.md", "Acme pitch", 1, "Investment: €320K SAFE."),
            sample("docs/beta.md", "Beta pitch", 3, "Investment: €500K SAFE."),
            // Two named companies never meet by matter.
            sample(
                "docs/c.md",
                "Notes",
                4,
                "Acme Corp raised €250K from Fjord Ventures.",
            ),
            sample(
                "docs/d.md",
                "Notes",
                5,
                "Beta Labs raised €900K from Fjord Ventures.",
            ),
        ],
        vec![],
    );
    assert!(
        links(&elements).is_empty(),
        "no pair: {:#?}",
        links(&elements)
    );
}

#[test]
fn another_source_restating_a_claim_supports_it() {
    let elements = graph(
        vec![
            source(
                "docs/plan.md",
                SourceKind::Document,
                1,
                "Project Atlas launches on June 3, 2027.",
            ),
            source(
                "mail/ok",
                SourceKind::Email,
                4,
                "Confirming the Project Atlas launch date: June 3, 2027.",
            ),
            source(
                "chat/x",
                SourceKind::Chat,
                5,
                "Project Atlas launch is June 10, 2027 I think.",
            ),
        ],
        vec![],
    );
    let by_id: BTreeMap<&str, &str> = elements
        .iter()
        .filter_map(|e| match e {
            GraphElement::Memory(m) => Some((m.id.as_str(), m.source_id.as_str())),
            _ => None,
        })
        .collect();
    let supports: Vec<(&str, &str)> = relation(&elements, "SUPPORTS")
        .into_iter()
        .map(|r| (by_id[r.from.as_str()], by_id[r.to.as_str()]))
        .collect();
    assert_eq!(
        supports,
        [("mail/ok", "docs/plan.md")],
        "{:#?}",
        links(&elements)
    );
}

#[test]
fn in_the_bundled_sample_adr_004_replaces_adr_001_and_its_header_is_no_statement() {
    let adr1 = include_str!("../../../../samples/docs/decisions/adr-001-kafka.md");
    let adr4 = include_str!("../../../../samples/docs/decisions/adr-004-managed-kafka.md");
    let elements = graph(
        vec![
            sample("decisions/adr-001-kafka.md", "ADR 001", 1, adr1),
            sample("decisions/adr-004-managed-kafka.md", "ADR 004", 20, adr4),
        ],
        vec![],
    );
    let source_of: BTreeMap<&str, &str> = elements
        .iter()
        .filter_map(|e| match e {
            GraphElement::Source(n) => Some((n.id.as_str(), n.source_id.as_str())),
            _ => None,
        })
        .collect();
    let replaced: Vec<(&str, &str)> = relation(&elements, "SUPERSEDES")
        .into_iter()
        .filter_map(|r| {
            Some((
                *source_of.get(r.from.as_str())?,
                *source_of.get(r.to.as_str())?,
            ))
        })
        .collect();
    assert_eq!(
        replaced,
        [(
            "decisions/adr-004-managed-kafka.md",
            "decisions/adr-001-kafka.md"
        )]
    );
    // "Date: 2026-06-18" and "Deciders: …" are metadata of the source, not memory objects.
    let texts: Vec<String> = memories(&elements).into_keys().collect();
    assert!(texts.iter().all(|t| !t.contains("Deciders")), "{texts:#?}");
    // What ADR 001 decided is no longer current: ADR 004's decision on the brokers replaced it,
    // from the day ADR 004 was written, and the edge says why.
    const SELF_HOSTED: &str =
        "We decided to run a three-broker Kafka cluster in our own data centre.";
    const MANAGED: &str =
        "We decided to replace the self-hosted brokers with a managed Kafka service in KRaft mode.";
    let by_text = memories(&elements);
    assert_eq!(by_text[SELF_HOSTED].standing, Standing::Superseded);
    assert_eq!(by_text[SELF_HOSTED].t_invalid, Some(20 * DAY));
    assert_eq!(by_text[MANAGED].standing, Standing::Current);
    let statement_edges: Vec<_> = relation(&elements, "SUPERSEDES")
        .into_iter()
        .filter(|r| r.to == by_text[SELF_HOSTED].id)
        .collect();
    assert_eq!(statement_edges.len(), 1, "{statement_edges:#?}");
    assert_eq!(statement_edges[0].from, by_text[MANAGED].id);
    assert!(
        statement_edges[0].evidence[0].contains("ADR 004 replaces ADR 001"),
        "{:?}",
        statement_edges[0].evidence
    );
    // Its context is no decision and stays as it was; nothing of ADR 004 is superseded.
    let context = "Connectors for chat, e-mail and calendars need a durable, replayable log.";
    assert_eq!(by_text[context].standing, Standing::Current);
    assert!(
        by_text
            .values()
            .filter(|m| m.source_id.contains("adr-004"))
            .all(|m| m.standing == Standing::Current)
    );
}

#[test]
fn the_same_statement_in_another_source_is_linked_to_the_first_and_boilerplate_is_not() {
    const SAID: &str = "The ingestion pipeline keeps every raw event for ninety days.";
    const TEMPLATE: &str = "Items marked with (R) are required prior to targeting a release.";
    let docs: Vec<SourceVersion> = (0..5)
        .map(|i| {
            let body = if i < 2 {
                format!("{TEMPLATE}\n\n{SAID}")
            } else {
                TEMPLATE.to_string()
            };
            source(&format!("docs/{i}.md"), SourceKind::Document, i + 1, &body)
        })
        .collect();
    let states = rounds(vec![
        (ones(docs.clone()), vec![]),
        (vec![(docs[0].clone(), -1)], vec![]),
    ]);
    let source_of = |elements: &[GraphElement]| -> BTreeMap<String, (String, String)> {
        elements
            .iter()
            .filter_map(|e| match e {
                GraphElement::Memory(m) => {
                    Some((m.id.clone(), (m.source_id.clone(), m.text.clone())))
                }
                _ => None,
            })
            .collect()
    };
    let copies = |elements: &[GraphElement]| -> Vec<(String, String, String)> {
        let by_id = source_of(elements);
        relation(elements, "SAME_STATEMENT")
            .into_iter()
            .map(|r| {
                let (from, text) = by_id[&r.from].clone();
                (from, by_id[&r.to].0.clone(), text)
            })
            .collect()
    };
    assert!(
        relation(&states[0], "SUPPORTS").is_empty(),
        "a copy is no evidence"
    );
    assert_eq!(
        copies(&states[0]),
        [(
            "docs/1.md".to_string(),
            "docs/0.md".to_string(),
            SAID.to_string()
        )],
        "the template line is in five sources: boilerplate"
    );
    assert!(copies(&states[1]).is_empty(), "retracted with docs/0.md");
}

#[test]
fn two_numbered_documents_supersede_each_other_only_through_their_headers() {
    // The same slip, written in two documents that each name their key: one design's date
    // is not the revision of the other's unless a header or a citation says so.
    let planned = format!("KEP: 101\nTitle: Atlas launch\n\n{PLANNED}\n");
    let slipped = format!("KEP: 102\nTitle: Atlas follow-up\n\n{SLIPPED}\n");
    let elements = graph(
        vec![
            source("kep-101", SourceKind::Document, 1, &planned),
            source("kep-102", SourceKind::Document, 9, &slipped),
        ],
        vec![],
    );
    assert!(
        !links(&elements).iter().any(|(t, ..)| t == "SUPERSEDES"),
        "{:?}",
        links(&elements)
    );
    assert_eq!(memories(&elements)[PLANNED].standing, Standing::Current);
    // With a header saying so, the documents replace each other (between their source nodes).
    let replacing = format!("KEP: 102\nTitle: Atlas follow-up\nReplaces: 101\n\n{SLIPPED}\n");
    let elements = graph(
        vec![
            source("kep-101", SourceKind::Document, 1, &planned),
            source("kep-102", SourceKind::Document, 9, &replacing),
        ],
        vec![],
    );
    // Between their source nodes, and from the newer plan to the older one it replaced.
    let replaced: Vec<_> = relation(&elements, "SUPERSEDES")
        .into_iter()
        .map(|r| (r.from.clone(), r.to.clone()))
        .collect();
    let by_text = memories(&elements);
    assert_eq!(replaced.len(), 2, "{replaced:?}");
    assert!(replaced.contains(&(by_text[SLIPPED].id.clone(), by_text[PLANNED].id.clone())));
    assert_eq!(by_text[PLANNED].standing, Standing::Superseded);
    // A header edited away takes the statement's supersession with it.
    let without = source("kep-102", SourceKind::Document, 9, &slipped);
    let states = rounds(vec![
        (
            ones(vec![
                source("kep-101", SourceKind::Document, 1, &planned),
                source("kep-102", SourceKind::Document, 9, &replacing),
            ]),
            vec![],
        ),
        (
            vec![
                (source("kep-102", SourceKind::Document, 9, &replacing), -1),
                (without, 1),
            ],
            vec![],
        ),
    ]);
    assert_eq!(memories(&states[0])[PLANNED].standing, Standing::Superseded);
    assert_eq!(memories(&states[1])[PLANNED].standing, Standing::Current);
    assert!(relation(&states[1], "SUPERSEDES").is_empty());
    // Unnumbered documents still supersede by what they say.
    let elements = graph(
        vec![
            source("notes-1", SourceKind::Document, 1, PLANNED),
            source("notes-2", SourceKind::Document, 9, SLIPPED),
        ],
        vec![],
    );
    assert_eq!(memories(&elements)[PLANNED].standing, Standing::Superseded);
}
