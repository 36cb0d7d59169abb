//! Tests of the whole generator: determinism, label integrity, coverage, scale.

use std::collections::{BTreeSet, HashMap};

use crate::labels::{Generated, TextRef};
use crate::{GenConfig, Generator};

fn run(seed: u64, events: u64) -> Vec<Generated> {
    Generator::new(GenConfig {
        seed,
        events,
        ..GenConfig::default()
    })
    .collect()
}

fn lines(generated: &[Generated]) -> Vec<String> {
    generated
        .iter()
        .map(|g| serde_json::to_string(&g.event).unwrap())
        .collect()
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let a = lines(&run(11, 600));
    assert_eq!(a, lines(&run(11, 600)));
    assert_ne!(a, lines(&run(12, 600)));
}

#[test]
fn written_corpus_is_byte_identical() {
    let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let config = GenConfig {
        seed: 5,
        events: 400,
        ..GenConfig::default()
    };
    crate::write_corpus(one.path(), &config, |_| {}).unwrap();
    crate::write_corpus(two.path(), &config, |_| {}).unwrap();
    for file in [
        "events.jsonl",
        "manifest.json",
        "labels/units.jsonl",
        "labels/entities.jsonl",
        "labels/claims.jsonl",
    ] {
        let (a, b) = (
            std::fs::read(one.path().join(file)).unwrap(),
            std::fs::read(two.path().join(file)).unwrap(),
        );
        assert!(a == b, "{file} differs between two runs");
    }
}

#[test]
fn every_label_points_at_text_of_its_event() {
    for seed in 1..=4 {
        labels_point_at_text(&run(seed, 2500));
    }
}

fn labels_point_at_text(generated: &[Generated]) {
    // The live body of every source at each point, to check pointers of later labels.
    let mut bodies: HashMap<String, String> = HashMap::new();
    let check = |bodies: &HashMap<String, String>, r: &TextRef, what: &str| {
        let body = bodies
            .get(&r.source_id)
            .unwrap_or_else(|| panic!("{what}: unknown source {}", r.source_id));
        assert!(
            body.contains(&r.text),
            "{what}: {:?} not in {}",
            r.text,
            r.source_id
        );
    };
    for g in generated {
        let e = &g.event;
        assert!(
            e.op == "delete" || !e.body.is_empty(),
            "empty upsert at line {}",
            g.line
        );
        bodies.insert(e.source_id.clone(), e.body.clone());
        for unit in &g.labels.units {
            assert_eq!(
                (unit.source_id.as_str(), unit.version),
                (e.source_id.as_str(), g.line)
            );
            assert!(
                e.body.contains(&unit.text),
                "unit {:?} not in body {:?}",
                unit.text,
                e.body
            );
            assert!(!unit.text.trim().is_empty());
            for mention in &unit.entities {
                assert!(
                    unit.text.contains(&mention.text),
                    "{:?} not in {:?}",
                    mention.text,
                    unit.text
                );
            }
        }
        for claim in &g.labels.claims {
            assert!(e.body.contains(&claim.text) && claim.source_id == e.source_id);
            assert_eq!(claim.valid_from, e.occurred_at);
        }
        for r in &g.labels.relations {
            assert!(e.body.contains(&r.text) && r.source_id == e.source_id);
        }
        for s in &g.labels.supersessions {
            check(&bodies, &s.newer, "newer");
            check(&bodies, &s.older, "older");
            assert_ne!(s.newer, s.older);
        }
        for c in &g.labels.contradictions {
            check(&bodies, &c.a, "a");
            check(&bodies, &c.b, "b");
            assert_ne!(c.a.source_id, c.b.source_id);
        }
        for a in &g.labels.answers {
            check(&bodies, &a.question, "question");
            check(&bodies, &a.answer, "answer");
            assert!(
                a.question.text.contains('?') || a.question.text.contains(':'),
                "{}",
                a.question.text
            );
        }
        for b in &g.labels.blocks {
            check(&bodies, &b.question, "question");
            check(&bodies, &b.blocked, "blocked");
            assert_ne!(b.question.source_id, b.blocked.source_id);
        }
    }
    // Labelled pointers stay valid in the final state: their sources are never deleted.
    let mut deleted = BTreeSet::new();
    for g in generated {
        if g.event.op == "delete" {
            deleted.insert(g.event.source_id.clone());
        }
    }
    for g in generated {
        let l = &g.labels;
        let pointed = l
            .claims
            .iter()
            .map(|c| &c.source_id)
            .chain(
                l.supersessions
                    .iter()
                    .flat_map(|s| [&s.newer.source_id, &s.older.source_id]),
            )
            .chain(
                l.contradictions
                    .iter()
                    .flat_map(|c| [&c.a.source_id, &c.b.source_id]),
            )
            .chain(
                l.answers
                    .iter()
                    .flat_map(|a| [&a.question.source_id, &a.answer.source_id]),
            )
            .chain(
                l.blocks
                    .iter()
                    .flat_map(|b| [&b.question.source_id, &b.blocked.source_id]),
            );
        for source in pointed {
            assert!(
                !deleted.contains(source),
                "{source} is labelled but deleted"
            );
        }
    }
}

#[test]
fn a_thousand_events_cover_every_type_kind_and_dynamic() {
    let generated = run(1, 1000);
    let types: BTreeSet<&str> = generated
        .iter()
        .flat_map(|g| &g.labels.units)
        .map(|u| u.memory_type)
        .collect();
    let expected = [
        "CONSTRAINT",
        "DECISION",
        "EVALUATION",
        "EVIDENCE",
        "HYPOTHESIS",
        "NARRATIVE",
        "NOISE",
        "OBSERVATION",
        "PLAN",
        "QUESTION",
    ];
    assert_eq!(types, expected.into_iter().collect());
    let kinds: BTreeSet<&str> = generated.iter().map(|g| g.event.kind).collect();
    assert_eq!(
        kinds,
        ["calendar", "chat", "document", "email"]
            .into_iter()
            .collect()
    );
    let count = |f: fn(&Generated) -> usize| generated.iter().map(f).sum::<usize>();
    assert!(count(|g| g.labels.supersessions.len()) >= 1);
    assert!(count(|g| g.labels.contradictions.len()) >= 1);
    assert!(count(|g| g.labels.answers.len()) >= 1);
    assert!(count(|g| g.labels.blocks.len()) >= 1);
    assert!(count(|g| g.labels.relations.len()) >= 1);
    assert!(count(|g| usize::from(g.event.op == "delete")) >= 1);
    assert!(count(|g| usize::from(g.edit)) >= 1);
    let chats = count(|g| usize::from(g.event.kind == "chat"));
    assert!((450..650).contains(&chats), "{chats} chats");
}

#[test]
fn several_seeds_cover_the_dynamics_at_small_scale() {
    for seed in 0..8 {
        let generated = run(seed, 1000);
        let l = |f: fn(&Generated) -> usize| generated.iter().map(f).sum::<usize>();
        assert!(l(|g| g.labels.supersessions.len()) >= 1, "seed {seed}");
        assert!(l(|g| g.labels.contradictions.len()) >= 1, "seed {seed}");
        assert!(l(|g| g.labels.answers.len()) >= 1, "seed {seed}");
    }
}

#[test]
fn scale_times_and_ids() {
    let generated = run(9, 5000);
    assert_eq!(generated.len(), 5000);
    let first = generated[0].event.occurred_at;
    let last = generated[4999].event.occurred_at;
    assert!(first > crate::time::DEFAULT_START_MS);
    let days = (last - first) / crate::time::DAY_MS;
    assert!((300..=430).contains(&days), "{days} days");
    assert!(
        generated
            .windows(2)
            .all(|w| w[0].event.occurred_at < w[1].event.occurred_at)
    );
    let mut seen = BTreeSet::new();
    for g in &generated {
        let fresh = seen.insert(g.event.source_id.clone());
        assert_eq!(fresh, !g.edit && g.event.op == "upsert", "line {}", g.line);
    }
}

#[test]
fn entities_have_aliases_and_addresses() {
    let mut generator = Generator::new(GenConfig {
        seed: 4,
        events: 2000,
        ..GenConfig::default()
    });
    let mentioned: BTreeSet<(String, String)> = generator
        .by_ref()
        .flat_map(|g| g.labels.units)
        .flat_map(|u| u.entities)
        .map(|m| (m.entity_id, m.text))
        .collect();
    let entities = generator.entity_labels();
    let by_id: HashMap<&str, &crate::labels::EntityLabel> =
        entities.iter().map(|e| (e.entity_id.as_str(), e)).collect();
    for (id, text) in &mentioned {
        let entity = by_id
            .get(id.as_str())
            .unwrap_or_else(|| panic!("unknown entity {id}"));
        assert!(
            entity.aliases.contains(text),
            "{text:?} missing from the aliases of {id}"
        );
    }
    let people: Vec<_> = entities
        .iter()
        .filter(|e| e.kind == crate::org::EntityKind::Person)
        .collect();
    assert!(people.len() >= 30, "{}", people.len());
    assert!(people.iter().all(|p| p.addresses[0].contains('@')));
    assert!(people.iter().any(|p| p.aliases.len() >= 3));
}
