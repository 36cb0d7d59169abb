use differential_dataflow::input::Input;
use epigraph_schemas::{Party, SourceKind};
use timely::dataflow::operators::capture::{Capture, Extract};

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::extract::mentions::normalise;
use crate::extract::{Extraction, Extractor, edge, entity_id};
use crate::graph::extract_graph;
use crate::model::{EntityNode, GraphElement, SourceVersion};
use crate::ontology::Ontology;

fn doc(id: &str, body: &str) -> SourceVersion {
    SourceVersion::new("acme", id, SourceKind::Document, body)
}

/// Runs `extract_graph` over the given rounds of updates and returns the consolidated updates
/// at each time.
pub(super) fn run(rounds: Vec<Vec<(SourceVersion, isize)>>) -> Vec<Vec<(GraphElement, isize)>> {
    let n = rounds.len();
    let captured = timely::execute_directly(move |worker| {
        let extractor = Arc::new(Extractor::bundled());
        let (mut input, captured) = worker.dataflow::<u64, _, _>(|scope| {
            let (input, docs) = scope.new_collection::<SourceVersion, isize>();
            (
                input,
                extract_graph(docs, extractor).consolidate().inner.capture(),
            )
        });
        for (t, round) in rounds.into_iter().enumerate() {
            input.advance_to(t as u64);
            for (version, diff) in round {
                input.update(version, diff);
            }
        }
        input.close();
        while worker.step() {}
        captured
    });
    let mut at = vec![Vec::new(); n];
    for (_, updates) in captured.extract() {
        for (element, time, diff) in updates {
            at[time as usize].push((element, diff));
        }
    }
    for updates in &mut at {
        updates.sort();
    }
    at
}

fn sorted(mut v: Vec<(GraphElement, isize)>) -> Vec<(GraphElement, isize)> {
    v.sort();
    v
}

#[test]
fn a_single_source_yields_exactly_its_extraction() {
    let a = doc(
        "a.md",
        "Maya Chen works on the Atlas project. Is the launch on June 3?",
    );
    let x = Extractor::bundled().extract(&a);
    let mut expected: Vec<(GraphElement, isize)> =
        x.elements.iter().cloned().map(|e| (e, 1)).collect();
    let entities = [("Maya Chen", "Person"), ("Atlas", "Project")];
    for (name, kind) in entities {
        let key = normalise(name);
        expected.push((
            GraphElement::Entity(EntityNode {
                id: entity_id("acme", kind, &key),
                tenant: "acme".into(),
                kind: kind.into(),
                name: name.into(),
                aliases: vec![name.into()],
                addresses: vec![],
                mentions: 1,
                sources: 1,
                t_valid: None,
                recorded_at: None,
            }),
            1,
        ));
    }
    expected.extend(
        x.entity_relations
            .iter()
            .cloned()
            .map(|r| (GraphElement::Relation(r), 1)),
    );
    assert_eq!(x.entity_relations.len(), 1);
    assert_eq!(run(vec![vec![(a, 1)]]), vec![sorted(expected)]);
}

#[test]
fn an_edit_retracts_exactly_the_changed_units() {
    let old = doc(
        "plan.md",
        "We decided to launch Atlas in May. Maya Chen works on the Atlas project.",
    );
    let new = doc(
        "plan.md",
        "We decided to launch Atlas in June. Maya Chen works on the Atlas project.",
    );
    let extractor = Extractor::bundled();
    let (x_old, x_new) = (extractor.extract(&old), extractor.extract(&new));
    let rounds = run(vec![vec![(old.clone(), 1)], vec![(old, -1), (new, 1)]]);
    // Expected change at time 1: per-source elements that differ, nothing else (the entities,
    // the WORKS_ON relation and the unchanged second sentence keep their content).
    let mut expected: Vec<(GraphElement, isize)> = Vec::new();
    for e in &x_old.elements {
        if !x_new.elements.contains(e) {
            expected.push((e.clone(), -1));
        }
    }
    for e in &x_new.elements {
        if !x_old.elements.contains(e) {
            expected.push((e.clone(), 1));
        }
    }
    // The WORKS_ON relation keeps its id; its provenance (version, span) is rewritten.
    let relation = |x: &Extraction| GraphElement::Relation(x.entity_relations[0].clone());
    expected.push((relation(&x_old), -1));
    expected.push((relation(&x_new), 1));
    assert!(!expected.is_empty());
    // The edited sentence changes id; the unchanged one keeps its id but its source version
    // changed, so it is rewritten with the same id.
    let changed_ids: BTreeSet<_> = expected.iter().map(|(e, _)| e.id().to_string()).collect();
    let unchanged = x_new
        .memories()
        .find(|m| m.text.starts_with("Maya"))
        .unwrap();
    assert!(changed_ids.contains(&unchanged.id));
    assert_eq!(rounds[1], sorted(expected));
}

#[test]
fn deleting_the_last_source_of_an_entity_retracts_it_and_shared_entities_survive() {
    let a = doc("a.md", "Kestrel Capital invests in Northwind Labs.");
    let b = doc("b.md", "Kestrel Capital sent the term sheet.");
    let rounds = run(vec![
        vec![(a.clone(), 1), (b.clone(), 1)],
        vec![(a.clone(), -1)],
    ]);
    let entity = |name: &str, at: &[(GraphElement, isize)]| -> Vec<(u32, isize)> {
        at.iter()
            .filter_map(|(e, d)| match e {
                GraphElement::Entity(n) if n.name == name => Some((n.sources, *d)),
                _ => None,
            })
            .collect()
    };
    assert_eq!(entity("Kestrel Capital", &rounds[0]), [(2, 1)]);
    assert_eq!(entity("Northwind Labs", &rounds[0]), [(1, 1)]);
    // Kestrel Capital is rewritten with one source; Northwind Labs disappears.
    let mut kestrel = entity("Kestrel Capital", &rounds[1]);
    kestrel.sort();
    assert_eq!(kestrel, [(1, 1), (2, -1)]);
    assert_eq!(entity("Northwind Labs", &rounds[1]), [(1, -1)]);
    // Everything a.md contributed alone is retracted exactly.
    for element in Extractor::bundled().extract(&a).elements {
        assert!(rounds[1].contains(&(element, -1)));
    }
    // Removing b too leaves nothing at all.
    let all = run(vec![
        vec![(a.clone(), 1), (b.clone(), 1)],
        vec![(a, -1), (b, -1)],
    ]);
    let mut net: BTreeMap<GraphElement, isize> = BTreeMap::new();
    for (e, d) in all.into_iter().flatten() {
        *net.entry(e).or_default() += d;
    }
    assert!(net.values().all(|d| *d == 0));
}

#[test]
fn a_phrase_known_elsewhere_becomes_a_mention() {
    let a = doc("a.md", "Borealis is the Ledger project.");
    let b = doc("b.md", "Ledger went down twice this morning.");
    let rounds = run(vec![vec![(a, 1), (b.clone(), 1)]]);
    let b_memory = Extractor::bundled()
        .extract(&b)
        .memories()
        .next()
        .unwrap()
        .id
        .clone();
    let ledger = entity_id("acme", "Project", "ledger");
    assert!(rounds[0].iter().any(|(e, d)| *d == 1
        && matches!(e, GraphElement::Relation(r)
            if r.rel_type == edge::MENTIONS && r.from == b_memory && r.to == ledger)));
}

#[test]
fn people_from_headers_author_and_attend() {
    let mut invite = SourceVersion::new(
        "acme",
        "cal-1",
        SourceKind::Calendar,
        "Decision review for Atlas. Priya will present the budget of €1.2M.",
    );
    invite.authors = vec![Party {
        name: Some("Priya Raman".into()),
        address: Some("Priya@Northwind.example".into()),
    }];
    invite.participants = vec![Party {
        name: None,
        address: Some("tom@northwind.example".into()),
    }];
    let x = Extractor::bundled().extract(&invite);
    let edges: Vec<&str> = x
        .elements
        .iter()
        .filter_map(|e| match e {
            GraphElement::Relation(r) => Some(r.rel_type.as_str()),
            _ => None,
        })
        .collect();
    assert!(edges.contains(&edge::AUTHORED) && edges.contains(&edge::ATTENDS));
    let priya = x.sightings.iter().find(|s| s.key == "priya raman").unwrap();
    assert_eq!(priya.address.as_deref(), Some("priya@northwind.example"));
    // "Priya" in the text is a mention of the author.
    assert!(
        x.sightings
            .iter()
            .any(|s| s.surface == "Priya" && s.key == "priya raman")
    );
    let budget: Vec<_> = x
        .claims()
        .map(|c| (c.attribute.as_str(), c.value.as_str()))
        .collect();
    assert_eq!(budget, [("budget", "1200000")]);
}

#[test]
fn units_carry_exact_char_spans_in_non_ascii_bodies() {
    let body = "Ça marche. Zoë décide: we decided to go with Berlin.";
    let x = Extractor::bundled().extract(&doc("fr.md", body));
    for m in x.memories() {
        let text: String = body
            .chars()
            .skip(m.span.0 as usize)
            .take((m.span.1 - m.span.0) as usize)
            .collect();
        assert_eq!(text, m.text);
    }
}

/// The `SAME_AS` pairs `(member name, canonical name)` of a graph.
fn same_as(elements: &[(GraphElement, isize)]) -> Vec<(String, String)> {
    let names: BTreeMap<&str, &str> = elements
        .iter()
        .filter_map(|(e, _)| match e {
            GraphElement::Entity(n) => Some((n.id.as_str(), n.name.as_str())),
            _ => None,
        })
        .collect();
    let mut pairs: Vec<(String, String)> = elements
        .iter()
        .filter_map(|(e, d)| match e {
            GraphElement::Relation(r) if r.rel_type == crate::resolve::SAME_AS && *d > 0 => Some((
                names[r.from.as_str()].to_string(),
                names[r.to.as_str()].to_string(),
            )),
            _ => None,
        })
        .collect();
    pairs.sort();
    pairs
}

#[test]
fn aliases_stated_in_text_join_their_entities() {
    let graph = run(vec![vec![
        (
            doc("a", "Jasminder Singh (Jas) will present the roadmap."),
            1,
        ),
        (doc("b", "Project Kestrel, a.k.a. Falcon, ships in May."), 1),
    ]])
    .pop()
    .unwrap();
    let pairs = same_as(&graph);
    assert_eq!(pairs.len(), 2, "{pairs:?}");
    assert!(pairs.iter().any(
        |(a, b)| [a.as_str(), b.as_str()] == ["Jas", "Jasminder Singh"]
            || [a.as_str(), b.as_str()] == ["Jasminder Singh", "Jas"]
    ));
    assert!(
        pairs
            .iter()
            .any(|(a, b)| (a == "Falcon" && b == "Kestrel") || (a == "Kestrel" && b == "Falcon"))
    );
}

#[test]
fn configured_aliases_join_names_no_rule_would() {
    let mut sources = Ontology::bundled_sources_for_tests();
    sources.push((
        "aliases.toml".into(),
        "[[alias]]\nkind = \"Project\"\nnames = [\"Kestrel\", \"Bluebird\"]\n".into(),
    ));
    let extractor = Arc::new(Extractor::new(Ontology::from_sources(sources).unwrap()).unwrap());
    let captured = timely::example(move |scope| {
        let docs = scope
            .new_collection_from(vec![
                doc("a", "Project Kestrel ships in May."),
                doc("b", "Project Bluebird needs two more engineers."),
            ])
            .1;
        extract_graph(docs, extractor).inner.capture()
    });
    let graph: Vec<(GraphElement, isize)> = captured
        .extract()
        .into_iter()
        .flat_map(|(_, v)| v)
        .map(|(e, _, d)| (e, d))
        .collect();
    let pairs = same_as(&graph);
    assert_eq!(pairs, [("Bluebird".to_string(), "Kestrel".to_string())]);
}

/// `(relation, from name, to name)` of every vocabulary relation of a text, sorted.
fn named_relations(text: &str) -> Vec<(String, String, String)> {
    let x = Extractor::bundled().extract(&doc("team.md", text));
    let name = |id: &str| {
        x.sightings
            .iter()
            .find(|s| s.entity_id == id)
            .map(|s| s.surface.clone())
            .unwrap_or_default()
    };
    let mut out: Vec<_> = x
        .entity_relations
        .iter()
        .map(|r| (r.rel_type.clone(), name(&r.from), name(&r.to)))
        .collect();
    out.sort();
    out.dedup();
    out
}

#[test]
fn coordinated_mentions_each_take_part_in_the_relation() {
    let t = |r: &str, a: &str, b: &str| (r.to_string(), a.to_string(), b.to_string());
    assert_eq!(
        named_relations("Maya Chen, Tom Park and Priya Raman report to Sara Diaz."),
        [
            t("REPORTS_TO", "Maya Chen", "Sara Diaz"),
            t("REPORTS_TO", "Priya Raman", "Sara Diaz"),
            t("REPORTS_TO", "Tom Park", "Sara Diaz"),
        ]
    );
    assert_eq!(
        named_relations("The Atlas project and the Borealis project are managed by Maya Chen."),
        [
            t("MANAGES", "Maya Chen", "Atlas"),
            t("MANAGES", "Maya Chen", "Borealis"),
        ]
    );
    // Two clauses are two relations, not a coordination across kinds.
    assert_eq!(
        named_relations("Maya Chen works on the Atlas project and Tom Park manages Sara Diaz."),
        [
            t("MANAGES", "Tom Park", "Sara Diaz"),
            t("WORKS_ON", "Maya Chen", "Atlas"),
        ]
    );
}

#[test]
fn a_relation_to_a_name_known_only_elsewhere_is_read_once_the_name_is_known_and_retracted_with_it()
{
    // "Vortex" is a project only because another source says so.
    let known = doc("projects.md", "Maya Chen works on the Vortex project.");
    let statement = doc("notes.md", "Tom Park works on Vortex these days.");
    let x = Extractor::bundled().extract(&statement);
    assert!(x.entity_relations.is_empty(), "alone, Vortex is nothing");
    assert_eq!(x.open_units.len(), 1);
    let works_on = |updates: &[(GraphElement, isize)]| -> Vec<(String, isize)> {
        updates
            .iter()
            .filter_map(|(e, d)| match e {
                GraphElement::Relation(r) if r.rel_type == "WORKS_ON" => {
                    Some((r.provenance.as_ref().unwrap().source_id.clone(), *d))
                }
                _ => None,
            })
            .collect()
    };
    let rounds = run(vec![
        vec![(statement.clone(), 1)],
        vec![(known.clone(), 1)],
        vec![(known, -1)],
    ]);
    assert!(works_on(&rounds[0]).is_empty());
    // Known now: Maya's own relation and Tom's, read from notes.md.
    let mut added = works_on(&rounds[1]);
    added.sort();
    assert_eq!(
        added,
        [("notes.md".to_string(), 1), ("projects.md".to_string(), 1)]
    );
    let tom = rounds[1]
        .iter()
        .find_map(|(e, _)| match e {
            GraphElement::Relation(r)
                if r.rel_type == "WORKS_ON"
                    && r.provenance.as_ref().unwrap().source_id == "notes.md" =>
            {
                Some(r.clone())
            }
            _ => None,
        })
        .unwrap();
    let span = tom.provenance.as_ref().unwrap().span;
    let text: String = statement
        .body
        .chars()
        .skip(span.0 as usize)
        .take((span.1 - span.0) as usize)
        .collect();
    assert_eq!(text, "Tom Park works on Vortex");
    assert_eq!(tom.to, entity_id("acme", "Project", "vortex"));
    // Retracting the source that made the name known retracts both.
    let mut removed = works_on(&rounds[2]);
    removed.sort();
    assert_eq!(
        removed,
        [
            ("notes.md".to_string(), -1),
            ("projects.md".to_string(), -1)
        ]
    );
}

#[test]
fn the_dataflow_joins_headers_into_supersedes_edges_between_source_nodes() {
    use std::sync::Arc;

    use differential_dataflow::input::Input;
    use epigraph_schemas::SourceKind;
    use timely::dataflow::operators::capture::{Capture, Extract};

    use crate::model::{GraphElement, SourceVersion};

    let doc = |id: &str, body: &str| SourceVersion::new("t", id, SourceKind::Document, body);
    let old = doc(
        "pep-0241",
        "PEP: 241\nStatus: Superseded\nSuperseded-By: 314\n\nMetadata 1.0.",
    );
    let new = doc("pep-0314", "PEP: 314\nReplaces: 241\n\nMetadata 1.1.");
    let other = doc("pep-0008", "PEP: 8\nSuperseded-By: 9999\n\nStyle.");
    let (old_node, new_node) = (old.node_id(), new.node_id());
    let extractor = Arc::new(Extractor::bundled());
    let captured = timely::example(move |scope| {
        let docs = scope.new_collection_from(vec![old, new, other]).1;
        extract_graph(docs, extractor).inner.capture()
    });
    let edges: Vec<(String, String)> = captured
        .extract()
        .into_iter()
        .flat_map(|(_, v)| v)
        .filter(|(_, _, diff)| *diff > 0)
        .filter_map(|(e, _, _)| match e {
            GraphElement::Relation(r) if r.rel_type == "SUPERSEDES" => Some((r.from, r.to)),
            _ => None,
        })
        .collect();
    // Both headers say it; one edge. A reference to a document not in the tenant makes none.
    assert_eq!(edges, [(new_node, old_node)]);
}
