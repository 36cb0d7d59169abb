//! Reviewers' verdicts on the judgements, run incrementally: a rejection retracts the edge and
//! what followed from it, a confirmation marks it, a withdrawal restores the state before, and
//! a review waiting for its edge applies when the edge appears.

use std::collections::BTreeMap;
use std::sync::Arc;

use differential_dataflow::input::Input;
use epigraph_schemas::SourceKind;
use timely::dataflow::operators::capture::{Capture, Extract};

use epigraph_schemas::feedback::ReviewVerdict;

use crate::epistemic::amend::Amendment;
use crate::epistemic::review::Review;
use crate::extract::Extractor;
use crate::graph::extract_graph_governed;
use crate::model::{EpistemicType, GraphElement, Note, Relation, SourceVersion, Standing};
use crate::resolve::Verdict;

const DAY: i64 = 86_400_000;

fn source(id: &str, day: i64, body: &str) -> SourceVersion {
    let mut s = SourceVersion::new("t", id, SourceKind::Document, body);
    s.occurred_at = Some(day * DAY);
    s.recorded_at = Some(day * DAY + 1_000);
    s
}

type Round = (Vec<(SourceVersion, isize)>, Vec<(Review, isize)>);
type GovernedRound = (
    Vec<(SourceVersion, isize)>,
    Vec<(Review, isize)>,
    Vec<(Amendment, isize)>,
);

/// The live graph after each round, run incrementally in one dataflow.
fn rounds(rounds: Vec<Round>) -> Vec<Vec<GraphElement>> {
    governed_rounds(rounds.into_iter().map(|(s, r)| (s, r, vec![])).collect())
}

/// [`rounds`] with amendments.
fn governed_rounds(rounds: Vec<GovernedRound>) -> Vec<Vec<GraphElement>> {
    let n = rounds.len();
    let captured = timely::execute_directly(move |worker| {
        let (mut sources, mut reviews, mut amendments, captured) =
            worker.dataflow::<u64, _, _>(|scope| {
                let (s_in, sources) = scope.new_collection::<SourceVersion, isize>();
                let (r_in, reviews) = scope.new_collection::<Review, isize>();
                let (a_in, amendments) = scope.new_collection::<Amendment, isize>();
                let verdicts = sources.clone().flat_map(|_| None::<Verdict>);
                let out = extract_graph_governed(
                    sources,
                    verdicts,
                    reviews,
                    amendments,
                    Arc::new(Extractor::bundled()),
                )
                .consolidate()
                .inner
                .capture();
                (s_in, r_in, a_in, out)
            });
        for (t, (s, r, a)) in rounds.into_iter().enumerate() {
            sources.advance_to(t as u64);
            reviews.advance_to(t as u64);
            amendments.advance_to(t as u64);
            for (x, d) in s {
                sources.update(x, d);
            }
            for (x, d) in r {
                reviews.update(x, d);
            }
            for (x, d) in a {
                amendments.update(x, d);
            }
        }
        sources.close();
        reviews.close();
        amendments.close();
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

fn memory_id(elements: &[GraphElement], text: &str) -> String {
    elements
        .iter()
        .find_map(|e| match e {
            GraphElement::Memory(m) if m.text == text => Some(m.id.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no memory object {text:?}"))
}

fn standing(elements: &[GraphElement], text: &str) -> Standing {
    elements
        .iter()
        .find_map(|e| match e {
            GraphElement::Memory(m) if m.text == text => Some(m.standing),
            _ => None,
        })
        .expect("the memory object")
}

fn edges<'a>(elements: &'a [GraphElement], rel_type: &str) -> Vec<&'a Relation> {
    elements
        .iter()
        .filter_map(|e| match e {
            GraphElement::Relation(r) if r.rel_type == rel_type => Some(r),
            _ => None,
        })
        .collect()
}

fn review(rel_type: &str, from: &str, to: &str, confirmed: bool) -> Review {
    verdict(
        rel_type,
        from,
        to,
        if confirmed {
            ReviewVerdict::Confirm
        } else {
            ReviewVerdict::Reject
        },
    )
}

fn verdict(rel_type: &str, from: &str, to: &str, verdict: ReviewVerdict) -> Review {
    Review {
        tenant: "t".into(),
        rel_type: rel_type.into(),
        from: from.into(),
        to: to.into(),
        verdict,
    }
}

fn memory<'a>(elements: &'a [GraphElement], text: &str) -> &'a crate::model::MemoryObject {
    elements
        .iter()
        .find_map(|e| match e {
            GraphElement::Memory(m) if m.text == text => Some(m),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no memory object {text:?}"))
}

const SHEET: &str = "Term sheet from Lighthouse Fund: €320K SAFE at a €2.2M cap.";
const MEMO: &str = "Internal memo: the Lighthouse Fund round is €200K with a €2.3M cap.";
const EARLY: &str = "Project Atlas launch is planned for May 13, 2027.";
const LATE: &str = "Heads up, the Project Atlas launch slips to June 3, 2027.";

#[test]
fn a_rejected_contradiction_is_retracted_and_withdrawing_the_rejection_brings_it_back() {
    let sheet = source("docs/term-sheet.md", 10, SHEET);
    let memo = source("mail/memo", 12, MEMO);
    let before = rounds(vec![(vec![(sheet.clone(), 1), (memo.clone(), 1)], vec![])]);
    let (s, m) = (memory_id(&before[0], SHEET), memory_id(&before[0], MEMO));
    assert_eq!(
        edges(&before[0], "CONTRADICTS").len(),
        2,
        "the pair, both ways"
    );
    // One review of the pair, written either way round, covers both edges.
    let rejected = review("CONTRADICTS", &m, &s, false);
    let graphs = rounds(vec![
        (vec![(sheet.clone(), 1), (memo.clone(), 1)], vec![]),
        (vec![], vec![(rejected.clone(), 1)]),
        (vec![], vec![(rejected.clone(), -1)]),
        (vec![], vec![(review("CONTRADICTS", &s, &m, true), 1)]),
    ]);
    assert!(edges(&graphs[1], "CONTRADICTS").is_empty(), "rejected");
    assert_eq!(
        (standing(&graphs[1], SHEET), standing(&graphs[1], MEMO)),
        (Standing::Current, Standing::Current)
    );
    assert_eq!(graphs[2], graphs[0], "withdrawn: exactly the state before");
    let confirmed = edges(&graphs[3], "CONTRADICTS");
    assert_eq!(confirmed.len(), 2);
    assert!(
        confirmed
            .iter()
            .all(|r| r.review.as_deref() == Some("confirmed"))
    );
}

#[test]
fn a_rejected_supersession_leaves_the_older_statement_current() {
    let early = source("chat/1", 1, EARLY);
    let late = source("chat/2", 9, LATE);
    let before = rounds(vec![(vec![(early.clone(), 1), (late.clone(), 1)], vec![])]);
    assert_eq!(standing(&before[0], EARLY), Standing::Superseded);
    let (e, l) = (memory_id(&before[0], EARLY), memory_id(&before[0], LATE));
    let graphs = rounds(vec![
        (
            vec![(early, 1), (late, 1)],
            vec![(review("SUPERSEDES", &l, &e, false), 1)],
        ),
        (vec![], vec![]),
    ]);
    for graph in &graphs {
        assert!(
            edges(graph, "SUPERSEDES")
                .iter()
                .all(|r| (r.from.as_str(), r.to.as_str()) != (l.as_str(), e.as_str())),
            "the rejected edge is never drawn"
        );
        assert_eq!(standing(graph, EARLY), Standing::Current);
    }
}

#[test]
fn a_rejection_published_before_its_edge_applies_when_the_edge_appears() {
    let sheet = source("docs/term-sheet.md", 10, SHEET);
    let memo = source("mail/memo", 12, MEMO);
    let ids = rounds(vec![(vec![(sheet.clone(), 1), (memo.clone(), 1)], vec![])]);
    let (s, m) = (memory_id(&ids[0], SHEET), memory_id(&ids[0], MEMO));
    let graphs = rounds(vec![
        (
            vec![(sheet, 1)],
            vec![(review("CONTRADICTS", &s, &m, false), 1)],
        ),
        (vec![(memo, 1)], vec![]),
    ]);
    assert_eq!(memory_id(&graphs[1], MEMO), m);
    assert!(
        edges(&graphs[1], "CONTRADICTS").is_empty(),
        "a rejection holds for a source that arrives later (a restart replays reviews first)"
    );
}

const PRIMARY: &str = "We will keep the Borealis reports on the old warehouse for now.";
const MOVE: &str = "Borealis reports move to the new lakehouse from Monday.";

#[test]
fn an_asserted_supersession_is_drawn_with_what_follows_and_withdrawing_it_restores() {
    let old = source("chat/1", 1, PRIMARY);
    let new = source("chat/2", 5, MOVE);
    let before = rounds(vec![(vec![(old.clone(), 1), (new.clone(), 1)], vec![])]);
    let (o, n) = (memory_id(&before[0], PRIMARY), memory_id(&before[0], MOVE));
    assert!(
        edges(&before[0], "SUPERSEDES").is_empty(),
        "the rules see no supersession here"
    );
    let asserted = verdict("SUPERSEDES", &n, &o, ReviewVerdict::Assert);
    let graphs = rounds(vec![
        (vec![(old, 1), (new, 1)], vec![]),
        (vec![], vec![(asserted.clone(), 1)]),
        (vec![], vec![(asserted, -1)]),
    ]);
    let drawn = edges(&graphs[1], "SUPERSEDES");
    assert_eq!(drawn.len(), 1);
    assert_eq!(
        (drawn[0].from.as_str(), drawn[0].to.as_str()),
        (n.as_str(), o.as_str())
    );
    assert_eq!(drawn[0].review.as_deref(), Some("asserted"));
    assert_eq!(standing(&graphs[1], PRIMARY), Standing::Superseded);
    assert_eq!(memory(&graphs[1], PRIMARY).t_invalid, Some(5 * DAY));
    assert_eq!(graphs[2], graphs[0], "withdrawn: exactly the state before");
}

#[test]
fn an_amendment_retypes_and_retires_a_memory_object_until_withdrawn() {
    let old = source("chat/1", 1, PRIMARY);
    let before = rounds(vec![(vec![(old.clone(), 1)], vec![])]);
    let o = memory_id(&before[0], PRIMARY);
    let amendment = Amendment {
        tenant: "t".into(),
        node: o.clone(),
        memory_type: Some(EpistemicType::Evaluation),
        text: None,
        valid_from: None,
        valid_until: Some(3 * DAY),
    };
    let graphs = governed_rounds(vec![
        (vec![(old, 1)], vec![], vec![]),
        (vec![], vec![], vec![(amendment.clone(), 1)]),
        (vec![], vec![], vec![(amendment, -1)]),
    ]);
    let amended = memory(&graphs[1], PRIMARY);
    assert_eq!(amended.id, o, "the id stays");
    assert_eq!(amended.memory_type, EpistemicType::Evaluation);
    assert_eq!(
        (amended.standing, amended.t_invalid),
        (Standing::Superseded, Some(3 * DAY))
    );
    assert_eq!(
        graphs[2], graphs[0],
        "withdrawn: exactly the extracted object"
    );
}

#[test]
fn a_note_takes_its_declared_type_and_asserts_its_links() {
    let old = source("chat/1", 1, PRIMARY);
    let ids = rounds(vec![(vec![(old.clone(), 1)], vec![])]);
    let o = memory_id(&ids[0], PRIMARY);
    let mut note = source("note/p1", 4, MOVE);
    note.note = Some(Note {
        memory_type: EpistemicType::Decision,
        links: vec![("SUPERSEDES".into(), o.clone())],
        proposer: "agent:scout".into(),
        proposal: "p1".into(),
    });
    let graphs = rounds(vec![(vec![(old, 1), (note, 1)], vec![])]);
    let written = memory(&graphs[0], MOVE);
    assert_eq!(written.memory_type, EpistemicType::Decision);
    assert_eq!(written.extractor, "proposal p1 by agent:scout");
    let drawn = edges(&graphs[0], "SUPERSEDES");
    assert_eq!(drawn.len(), 1);
    assert_eq!(drawn[0].to, o);
    assert_eq!(standing(&graphs[0], PRIMARY), Standing::Superseded);
}

const DEPRECATED: &str =
    "The ``syncdb`` command has been deprecated in favor of the new ``migrate`` command.";
const REMOVED: &str = "The ``syncdb`` command is removed.";

#[test]
fn a_rejected_implementation_is_retracted_and_a_confirmed_one_marked() {
    let notes = |version: &str, day: i64, body: &str| {
        source(
            &format!("django-{version}"),
            day,
            &format!("# Django {version} release notes\n\n{body}\n"),
        )
    };
    let (announced, done) = (notes("1.7", 400, DEPRECATED), notes("1.9", 900, REMOVED));
    let before = rounds(vec![(
        vec![(announced.clone(), 1), (done.clone(), 1)],
        vec![],
    )]);
    let (a, d) = (
        memory_id(&before[0], DEPRECATED),
        memory_id(&before[0], REMOVED),
    );
    let drawn = |graph: &[GraphElement]| -> Vec<(String, String, Option<String>)> {
        edges(graph, "IMPLEMENTS")
            .iter()
            .map(|r| (r.from.clone(), r.to.clone(), r.review.clone()))
            .collect()
    };
    assert_eq!(drawn(&before[0]), [(d.clone(), a.clone(), None)]);
    let rejected = review("IMPLEMENTS", &d, &a, false);
    let graphs = rounds(vec![
        (vec![(announced, 1), (done, 1)], vec![(rejected.clone(), 1)]),
        (
            vec![],
            vec![(rejected, -1), (review("IMPLEMENTS", &d, &a, true), 1)],
        ),
    ]);
    assert_eq!(
        drawn(&graphs[0]),
        [],
        "the rejected implementation is not drawn"
    );
    assert_eq!(
        drawn(&graphs[1]),
        [(d, a, Some("confirmed".to_string()))],
        "withdrawn and confirmed instead: drawn again, marked"
    );
}
