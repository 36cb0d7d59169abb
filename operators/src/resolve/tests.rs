use std::collections::BTreeMap;

use differential_dataflow::input::Input;
use timely::dataflow::operators::capture::{Capture, Extract};

use super::*;
use crate::extract::entity_id;

fn seen(kind: &str, name: &str, address: Option<&str>, source: &str) -> Sighting {
    Sighting {
        entity_id: entity_id("t", kind, name),
        tenant: "t".into(),
        kind: kind.into(),
        key: name.into(),
        surface: name.into(),
        address: address.map(str::to_string),
        source_id: source.into(),
        seen_at: None,
        recorded_at: None,
    }
}

type Round = (Vec<(Sighting, isize)>, Vec<(Verdict, isize)>);

/// The net `SAME_AS` edges after each round, as (member name, canonical name) pairs.
fn run(rounds: Vec<Round>) -> Vec<BTreeMap<(String, String), isize>> {
    let n = rounds.len();
    let captured = timely::execute_directly(move |worker| {
        let (mut sightings, mut verdicts, captured) = worker.dataflow::<u64, _, _>(|scope| {
            let (s_in, sightings) = scope.new_collection::<Sighting, isize>();
            let (v_in, verdicts) = scope.new_collection::<Verdict, isize>();
            let aliases = scope
                .new_collection_from(Vec::<crate::extract::aliases::AliasLink>::new())
                .1;
            let out = resolve_identities(sightings, verdicts, aliases)
                .consolidate()
                .inner
                .capture();
            (s_in, v_in, out)
        });
        for (t, (s, v)) in rounds.into_iter().enumerate() {
            sightings.advance_to(t as u64);
            verdicts.advance_to(t as u64);
            for (x, d) in s {
                sightings.update(x, d);
            }
            for (x, d) in v {
                verdicts.update(x, d);
            }
        }
        sightings.close();
        verdicts.close();
        while worker.step() {}
        captured
    });
    let mut net: BTreeMap<(String, String), isize> = BTreeMap::new();
    let mut at: Vec<Vec<(GraphElement, u64, isize)>> = vec![Vec::new(); n];
    for (_, updates) in captured.extract() {
        for (e, t, d) in updates {
            at[t as usize].push((e, t, d));
        }
    }
    let mut out = Vec::new();
    for updates in at {
        for (e, _, d) in updates {
            if let GraphElement::Relation(r) = e {
                *net.entry((r.from, r.to)).or_default() += d;
            }
        }
        net.retain(|_, d| *d != 0);
        out.push(net.clone());
    }
    out
}

fn id(kind: &str, name: &str) -> String {
    entity_id("t", kind, name)
}

#[test]
fn addresses_initials_and_first_names_merge_people_and_never_across_kinds() {
    let result = run(vec![(
        vec![
            (seen("Person", "jasminder singh", Some("jas@acme"), "a"), 1),
            (seen("Person", "jas", Some("jas@acme"), "b"), 1),
            (seen("Person", "j. singh", None, "c"), 1),
            (seen("Person", "maya chen", None, "a"), 1),
            (seen("Person", "maya", None, "d"), 1),
            (seen("Project", "maya", None, "d"), 1),
            (seen("Person", "tom berg", None, "a"), 1),
            (seen("Person", "tina berg", None, "a"), 1),
            (seen("Person", "t. berg", None, "e"), 1),
        ],
        vec![],
    )]);
    let edges = &result[0];
    let linked = |a: &str, b: &str| {
        let (x, y) = (id("Person", a), id("Person", b));
        let canonical = |n: &String| {
            edges
                .keys()
                .find(|(m, _)| m == n)
                .map_or(n.clone(), |(_, c)| c.clone())
        };
        canonical(&x) == canonical(&y)
    };
    assert!(linked("jasminder singh", "jas"), "same address");
    assert!(
        linked("jasminder singh", "j. singh"),
        "initial with a unique fit"
    );
    assert!(linked("maya chen", "maya"), "a lone first name");
    assert!(!linked("tom berg", "tina berg"));
    assert!(
        !linked("t. berg", "tom berg") && !linked("t. berg", "tina berg"),
        "ambiguous initial"
    );
    let project = id("Project", "maya");
    assert!(
        edges.keys().all(|(m, c)| *m != project && *c != project),
        "kinds never merge"
    );
}

#[test]
fn a_distinct_verdict_splits_and_its_withdrawal_restores_exactly() {
    let people = vec![
        (seen("Person", "alex kim", Some("ak@acme"), "a"), 1),
        (seen("Person", "alexander kim", Some("ak@acme"), "b"), 1),
    ];
    let verdict = Verdict {
        tenant: "t".into(),
        a: id("Person", "alex kim"),
        b: id("Person", "alexander kim"),
        same: false,
    };
    let result = run(vec![
        (people, vec![]),
        (vec![], vec![(verdict.clone(), 1)]),
        (vec![], vec![(verdict, -1)]),
    ]);
    assert_eq!(result[0].len(), 1);
    assert!(result[1].is_empty(), "the distinct verdict separates them");
    assert_eq!(
        result[2], result[0],
        "withdrawing it restores the previous state"
    );
    let same = Verdict {
        tenant: "t".into(),
        a: id("Person", "ann lee"),
        b: id("Person", "annie park"),
        same: true,
    };
    let result = run(vec![(
        vec![
            (seen("Person", "ann lee", None, "a"), 1),
            (seen("Person", "annie park", None, "b"), 1),
        ],
        vec![(same, 1)],
    )]);
    assert_eq!(
        result[0].len(),
        1,
        "a same verdict merges what no rule would"
    );
}

/// Random sequences of inserts, retractions and verdicts: the incremental result after the last
/// round equals a from-scratch run on the final inputs.
#[test]
fn incremental_equals_from_scratch_on_random_histories() {
    let names = [
        "jasminder singh",
        "jas singh",
        "j. singh",
        "jas",
        "maya chen",
        "maya",
        "m. chen",
        "tom berg",
        "tina berg",
        "t. berg",
        "kestrel capital",
        "kestrel capitol",
    ];
    let addresses = [None, Some("x@acme"), Some("y@acme")];
    let mut state: u64 = 42;
    let mut next = move |n: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) as usize) % n
    };
    for history in 0..20 {
        let mut live_s: BTreeMap<Sighting, isize> = BTreeMap::new();
        let mut live_v: BTreeMap<Verdict, isize> = BTreeMap::new();
        let mut rounds: Vec<Round> = Vec::new();
        for _ in 0..6 {
            let (mut s, mut v) = (Vec::new(), Vec::new());
            for _ in 0..4 {
                let name = names[next(names.len())];
                let kind = if name.starts_with("kestrel") {
                    "Organization"
                } else {
                    "Person"
                };
                let sighting = seen(kind, name, addresses[next(3)], &format!("s{}", next(3)));
                let present = live_s.get(&sighting).copied().unwrap_or(0) > 0;
                let diff = if present && next(2) == 0 { -1 } else { 1 };
                *live_s.entry(sighting.clone()).or_default() += diff;
                s.push((sighting, diff));
            }
            if next(2) == 0 {
                let (a, b) = (names[next(names.len())], names[next(names.len())]);
                let verdict = Verdict {
                    tenant: "t".into(),
                    a: id("Person", a),
                    b: id("Person", b),
                    same: next(2) == 0,
                };
                let present = live_v.get(&verdict).copied().unwrap_or(0) > 0;
                let diff = if present { -1 } else { 1 };
                *live_v.entry(verdict.clone()).or_default() += diff;
                v.push((verdict, diff));
            }
            rounds.push((s, v));
        }
        let incremental = run(rounds).pop().unwrap();
        let final_inputs: Round = (
            live_s.into_iter().filter(|(_, d)| *d != 0).collect(),
            live_v.into_iter().filter(|(_, d)| *d != 0).collect(),
        );
        let scratch = run(vec![final_inputs]).pop().unwrap();
        assert_eq!(incremental, scratch, "history {history}");
    }
}

#[test]
fn each_identity_link_says_why_in_words() {
    let captured = timely::example(|scope| {
        let sightings = scope
            .new_collection_from(vec![
                seen("Person", "maya chen", Some("maya@x"), "a"),
                seen("Person", "m. chen", Some("maya@x"), "b"),
            ])
            .1;
        let verdicts = scope.new_collection_from(Vec::<Verdict>::new()).1;
        let aliases = scope
            .new_collection_from(Vec::<crate::extract::aliases::AliasLink>::new())
            .1;
        resolve_identities(sightings, verdicts, aliases)
            .inner
            .capture()
    });
    let edges: Vec<Relation> = captured
        .extract()
        .into_iter()
        .flat_map(|(_, updates)| updates)
        .filter_map(|(e, _, d)| match e {
            GraphElement::Relation(r) if d > 0 => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(edges.len(), 1, "{edges:?}");
    let edge = &edges[0];
    assert_eq!(edge.rel_type, SAME_AS);
    // Both reasons, each naming the entity at the other end of the evidence.
    let other = if edge.to == id("Person", "maya chen") {
        "maya chen"
    } else {
        "m. chen"
    };
    assert_eq!(edge.evidence.len(), 2, "{:?}", edge.evidence);
    assert!(
        edge.evidence
            .contains(&format!("same address maya@x — {other}")),
        "{:?}",
        edge.evidence
    );
    assert!(
        edge.evidence
            .iter()
            .any(|e| e.starts_with("names ") && e.contains("\"m. chen\"")),
        "{:?}",
        edge.evidence
    );
}
