//! The priority operator over the graph the other operators build: memory objects are the
//! nodes, the signed relations between them (`SUPERSEDES`, `CONTRADICTS`, `ANSWERS`, …) the
//! edges, and each node's K comes back as a [`NodePriority`] element.

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use timely::progress::Timestamp;

use std::collections::BTreeSet;

use super::{Now, PriorityConfig, PriorityEdge, PriorityNode, Usage, priorities};
use crate::extract::doclinks::declares_retired;
use crate::model::{GraphElement, MemoryObject, NodePriority, Standing, stable_id};

/// K for every memory object of `graph`, as `Priority` elements.
///
/// A node is created at its valid time (else its recorded time); it is an open question while
/// its standing is `open`; B of its urgency is the number of nodes it holds up (`BLOCKS`
/// edges); stakes are the configured default; only edges without `t_invalid` act; it is retired (c adds a_r) while
/// its source document is replaced by another (a demoting edge between the two source nodes) or
/// declares itself superseded, withdrawn, rejected, … in a header line that is a memory object.
/// Relations whose type is not a configured edge are ignored.
///
/// ```
/// use differential_dataflow::input::Input;
/// use epigraph_operators::{GraphElement, SourceVersion, extract::Extractor, extract_graph};
/// use epigraph_operators::priority::{Now, PriorityConfig, Usage, prioritise};
/// use epigraph_schemas::SourceKind;
/// use std::sync::Arc;
/// use timely::dataflow::operators::capture::{Capture, Extract};
///
/// let day = 86_400_000;
/// let mut early = SourceVersion::new("t", "a", SourceKind::Chat, "Project Atlas launch is planned for May 13, 2027.");
/// early.occurred_at = Some(day);
/// let mut late = SourceVersion::new("t", "b", SourceKind::Chat, "Heads up, the Project Atlas launch slips to June 3, 2027.");
/// late.occurred_at = Some(9 * day);
/// let captured = timely::example(move |scope| {
///     let sources = scope.new_collection_from(vec![early, late]).1;
///     let usages = scope.new_collection_from(Vec::<Usage>::new()).1;
///     let now = scope.new_collection_from(vec![Now(10 * day)]).1;
///     let graph = extract_graph(sources, Arc::new(Extractor::bundled()));
///     prioritise(graph, usages, now, &PriorityConfig::bundled()).inner.capture()
/// });
/// let k: Vec<i64> = captured.extract().into_iter().flat_map(|(_, v)| v)
///     .filter_map(|(e, _, _)| match e { GraphElement::Priority(p) => Some(p.priority.k.0), _ => None })
///     .collect();
/// assert_eq!(k.len(), 2, "one K per memory object");
/// assert!(k.iter().all(|k| (0..=1_000_000).contains(k)));
/// ```
pub fn prioritise<'s, T>(
    graph: VecCollection<'s, T, GraphElement>,
    usages: VecCollection<'s, T, Usage>,
    now: VecCollection<'s, T, Now>,
    config: &PriorityConfig,
) -> VecCollection<'s, T, GraphElement>
where
    T: Timestamp + Lattice + Ord,
{
    let memories = graph.clone().flat_map(|e| match e {
        GraphElement::Memory(m) => Some(m),
        _ => None,
    });
    let retired = retired_sources(graph.clone(), memories.clone(), config);
    let nodes = memories.map(|m| {
        let source = stable_id(&["source", &m.tenant, &m.source_id]);
        let node = PriorityNode {
            created_ms: m.t_valid.or(m.recorded_at).unwrap_or(0),
            open: m.standing == Standing::Open,
            tenant: m.tenant,
            id: m.id,
            memory_type: m.memory_type,
            blocking: 0,
            stakes: None,
            retired: false,
            // Only a field of the header block: a chat line `Status: shipped it` is a statement.
            metadata: m.header && crate::extract::doclinks::is_status_line(&m.text),
        };
        ((node.tenant.clone(), source), node)
    });
    let in_retired = nodes
        .clone()
        .semijoin(retired.clone())
        .map(|(_, mut node)| {
            node.retired = true;
            node
        });
    let nodes = nodes
        .antijoin(retired)
        .map(|(_, node)| node)
        .concat(in_retired);
    // Only edges still in force act: a contradiction one side of which was superseded, or a
    // block whose question was answered, has ended (`t_invalid`).
    let configured: BTreeSet<String> = config.edges.keys().cloned().collect();
    let edges = graph.flat_map(move |e| match e {
        GraphElement::Relation(r) if r.t_invalid.is_none() && configured.contains(&r.rel_type) => {
            Some(PriorityEdge {
                tenant: r.tenant,
                from: r.from,
                to: r.to,
                rel_type: r.rel_type,
            })
        }
        _ => None,
    });
    let nodes = with_blocking(nodes, edges.clone(), config);
    priorities(nodes, edges, usages, now, config)
        .map(|w| GraphElement::Priority(NodePriority::new(&w.tenant, &w.id, w.priority)))
}

/// `nodes` with B of h set: how many other nodes each holds up through edges in force whose
/// type counts as blocking (`BLOCKS`).
fn with_blocking<'s, T>(
    nodes: VecCollection<'s, T, PriorityNode>,
    edges: VecCollection<'s, T, PriorityEdge>,
    config: &PriorityConfig,
) -> VecCollection<'s, T, PriorityNode>
where
    T: Timestamp + Lattice + Ord,
{
    let blocking = config.edge_types(|role| role.blocking);
    let counts = edges
        .filter(move |e| blocking.contains(&e.rel_type) && e.from != e.to)
        .map(|e| ((e.tenant, e.from), e.to))
        .distinct()
        .map(|(node, _)| node)
        .count();
    let keyed = nodes.map(|n| ((n.tenant.clone(), n.id.clone()), n));
    let counted = keyed.clone().join_map(counts.clone(), |_, node, count| {
        let mut node = node.clone();
        node.blocking = u32::try_from(*count).unwrap_or(u32::MAX);
        node
    });
    keyed
        .antijoin(counts.map(|(node, _)| node))
        .map(|(_, node)| node)
        .concat(counted)
}

/// `(tenant, source node id)` of every retired document: the target of a demoting edge
/// (`SUPERSEDES`) between source nodes, or a source with a memory object that is a retiring
/// field of its header block ([`declares_retired`]; a chat line `Status: withdrawn` in a
/// message retires nothing). Only a document with memory objects matters, so targets
/// that are not sources of memory objects are harmless.
fn retired_sources<'s, T>(
    graph: VecCollection<'s, T, GraphElement>,
    memories: VecCollection<'s, T, MemoryObject>,
    config: &PriorityConfig,
) -> VecCollection<'s, T, (String, String)>
where
    T: Timestamp + Lattice + Ord,
{
    let demoting = config.edge_types(|role| role.demotes);
    let replaced = graph.flat_map(move |e| match e {
        GraphElement::Relation(r) if demoting.contains(&r.rel_type) => Some((r.tenant, r.to)),
        _ => None,
    });
    let withdrawn = memories
        .filter(|m| m.header && declares_retired(&m.text))
        .map(|m| {
            let source = stable_id(&["source", &m.tenant, &m.source_id]);
            (m.tenant, source)
        });
    replaced.concat(withdrawn).distinct()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use differential_dataflow::input::Input;
    use epigraph_schemas::SourceKind;
    use timely::dataflow::operators::capture::{Capture, Extract};

    use super::*;
    use crate::extract::Extractor;
    use crate::graph::extract_graph;
    use crate::model::SourceVersion;

    const DAY: i64 = 86_400_000;

    /// (source id, text) → the priority of every memory object, net after each epoch.
    type Ranked = BTreeMap<(String, String), crate::priority::Priority>;

    /// Runs extraction and priorities over epochs of source updates; the net result of each.
    fn run(epochs: Vec<Vec<(SourceVersion, isize)>>) -> Vec<Ranked> {
        let n = epochs.len();
        let captured = timely::execute_directly(move |worker| {
            let (mut sources, captured) = worker.dataflow::<u64, _, _>(|scope| {
                let (input, sources) = scope.new_collection::<SourceVersion, isize>();
                let usages = scope.new_collection_from(Vec::<Usage>::new()).1;
                let now = scope.new_collection_from(vec![Now(30 * DAY)]).1;
                let graph = extract_graph(sources, Arc::new(Extractor::bundled()));
                let memories = graph.clone().flat_map(|e| match e {
                    GraphElement::Memory(m) => Some(m),
                    _ => None,
                });
                let ranked = prioritise(graph, usages, now, &PriorityConfig::bundled());
                let out = memories
                    .map(|m| (m.id.clone(), m))
                    .join_map(
                        ranked.flat_map(|e| match e {
                            GraphElement::Priority(p) => Some((p.node.clone(), p.priority)),
                            _ => None,
                        }),
                        |_, m, p| ((m.source_id.clone(), m.text.clone()), *p),
                    )
                    .consolidate()
                    .inner
                    .capture();
                (input, out)
            });
            for (t, epoch) in epochs.into_iter().enumerate() {
                sources.advance_to(t as u64);
                for (source, diff) in epoch {
                    sources.update(source, diff);
                }
            }
            sources.close();
            captured
        });
        let mut net: BTreeMap<((String, String), crate::priority::Priority), isize> =
            BTreeMap::new();
        let mut updates: Vec<_> = captured
            .extract()
            .into_iter()
            .flat_map(|(_, v)| v)
            .collect();
        updates.sort_by_key(|(_, t, _)| *t);
        let mut out = Vec::new();
        for t in 0..n as u64 {
            for (record, _, diff) in updates.iter().filter(|(_, at, _)| *at == t) {
                *net.entry(record.clone()).or_default() += diff;
            }
            out.push(
                net.iter()
                    .filter(|(_, d)| **d != 0)
                    .map(|(((s, x), p), d)| {
                        assert_eq!(*d, 1, "one priority per object");
                        ((s.clone(), x.clone()), *p)
                    })
                    .collect(),
            );
        }
        out
    }

    fn doc(id: &str, body: &str) -> SourceVersion {
        let mut doc = SourceVersion::new("t", id, SourceKind::Document, body);
        doc.occurred_at = Some(DAY);
        doc
    }

    /// An ADR's status line is typed a decision by its words, but it is a fact about the
    /// document: it pays a_m and stays below the decisions the ADR records (the demo's top three
    /// were all K = 1.000 decisions, one of them `Status: Accepted`, issue 20).
    #[test]
    fn a_documents_status_line_stands_below_its_decisions() {
        let config = PriorityConfig::bundled();
        assert!(config.metadata_weight.0 > 0);
        let adr = doc(
            "adr-004",
            "# ADR 004: Managed Kafka\n\nStatus: Accepted\nDate: 2026-06-18\n\n## Decision\n\nWe decided to move to a managed Kafka service.\n",
        );
        // The same words in a message are a statement, not a field of a header.
        let chat = doc("standup", "Status: decided to ship");
        let [ranked]: [Ranked; 1] = run(vec![vec![(adr, 1), (chat, 1)]])
            .try_into()
            .expect("one epoch");
        let k_of = |prefix: &str| {
            ranked
                .iter()
                .find(|((_, text), _)| text.starts_with(prefix))
                .map(|(_, p)| (p.k, p.c.0))
                .unwrap_or_else(|| panic!("{prefix}: {ranked:?}"))
        };
        let (status_k, status_c) = k_of("Status: Accepted");
        let (decision_k, decision_c) = k_of("We decided");
        assert_eq!((status_c, decision_c), (config.metadata_weight.0, 0));
        assert!(status_k < decision_k, "{status_k:?} < {decision_k:?}");
        let (_, chat_c) = k_of("Status: decided");
        assert_eq!(chat_c, 0, "a message's status line pays nothing");
    }

    fn c_of(ranked: &Ranked, source: &str) -> Vec<i64> {
        ranked
            .iter()
            .filter(|((s, _), _)| s == source)
            .map(|(_, p)| p.c.0)
            .collect()
    }

    #[test]
    fn the_objects_of_a_replaced_or_withdrawn_document_pay_a_r_and_recover_exactly() {
        let a_r = PriorityConfig::bundled().retired_source_weight.0;
        assert!(a_r > 0);
        let old = doc(
            "pep-0241",
            "PEP: 241\nTitle: Metadata 1.0\n\nWe decided to use the key-value format.",
        );
        let new = doc(
            "pep-0314",
            "PEP: 314\nTitle: Metadata 1.1\nReplaces: 241\n\nWe decided to use the extended format.",
        );
        let withdrawn = doc(
            "pep-0009",
            "PEP: 9\nTitle: Sample Plaintext Template\nStatus: Withdrawn\n\nWe decided to use plain text templates.",
        );
        let epochs = vec![
            vec![(old.clone(), 1), (withdrawn.clone(), 1)],
            vec![(new.clone(), 1)],
            vec![(new, -1)],
        ];
        let [before, replaced, restored]: [Ranked; 3] =
            run(epochs).try_into().expect("three epochs");
        assert!(!c_of(&before, "pep-0241").is_empty());
        assert!(
            c_of(&before, "pep-0241").iter().all(|c| *c == 0),
            "{before:?}"
        );
        // A withdrawn document's objects pay a_r from the start; its status line, metadata,
        // a_m too.
        let a_m = PriorityConfig::bundled().metadata_weight.0;
        let withdrawn_c: Vec<(String, i64)> = before
            .iter()
            .filter(|((s, _), _)| s == "pep-0009")
            .map(|((_, text), p)| (text.clone(), p.c.0))
            .collect();
        assert!(withdrawn_c.len() >= 2, "{before:?}");
        for (text, c) in &withdrawn_c {
            let expected = if text.starts_with("Status:") {
                a_r + a_m
            } else {
                a_r
            };
            assert_eq!(*c, expected, "{text}: {withdrawn_c:?}");
        }
        // Once another document replaces it, the old one's objects pay a_r and rank lower;
        // the new one's do not.
        assert!(c_of(&replaced, "pep-0241").iter().all(|c| *c == a_r));
        assert!(c_of(&replaced, "pep-0314").iter().all(|c| *c == 0));
        let decision = |r: &Ranked, s: &str| {
            r.iter()
                .find(|((source, text), _)| source == s && text.starts_with("We decided"))
                .map(|(_, p)| p.k)
                .expect("the decision is a memory object")
        };
        assert!(decision(&replaced, "pep-0241") < decision(&replaced, "pep-0314"));
        assert!(decision(&replaced, "pep-0241") < decision(&before, "pep-0241"));
        // Retracting the new document restores every priority exactly.
        assert_eq!(restored, before);
    }

    #[test]
    fn an_open_question_gains_urgency_for_what_it_blocks_and_the_block_ends_with_its_answer() {
        let config = PriorityConfig::bundled();
        let chat = |id: &str, day: i64, body: &str| {
            let mut s = SourceVersion::new("t", id, SourceKind::Chat, body);
            s.occurred_at = Some(day * DAY);
            s
        };
        let question = chat("q", 1, "Who owns the Project Atlas budget?");
        let held = chat(
            "h",
            2,
            "The Project Atlas vendor contract is blocked until we know who owns the budget.",
        );
        let mut answer = chat("a", 4, "Mateo Rossi will own the Project Atlas budget.");
        answer.authors = vec![epigraph_schemas::Party {
            name: Some("Mateo Rossi".into()),
            address: Some("mateo@atlas.example".into()),
        }];
        let [alone, blocking, answered]: [Ranked; 3] = run(vec![
            vec![(question, 1)],
            vec![(held, 1)],
            vec![(answer, 1)],
        ])
        .try_into()
        .expect("three epochs");
        let of = |r: &Ranked, source: &str| {
            let found: Vec<_> = r.iter().filter(|((s, _), _)| s == source).collect();
            assert_eq!(found.len(), 1, "{r:?}");
            *found[0].1
        };
        // B = 1 adds blocking_weight to h (below the clamp at 1); the held statement pays a_c.
        let (before, after) = (of(&alone, "q"), of(&blocking, "q"));
        assert_eq!(after.h.0 - before.h.0, config.blocking_weight.0);
        assert!(after.k >= before.k, "{before:?} {after:?}");
        assert_eq!(of(&blocking, "h").c.0, config.penalty_weight.0);
        // Once answered the question has no urgency, and the block no longer penalises.
        assert_eq!(of(&answered, "q").h.0, 0);
        assert_eq!(of(&answered, "h").c.0, 0);
    }
}
