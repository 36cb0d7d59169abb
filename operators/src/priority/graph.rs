//! The priority operator over the graph the other operators build: memory objects are the
//! nodes, the signed relations between them (`SUPERSEDES`, `CONTRADICTS`, `ANSWERS`, …) the
//! edges, and each node's K comes back as a [`NodePriority`] element.

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use timely::progress::Timestamp;

use super::{Now, PriorityConfig, PriorityEdge, PriorityNode, Usage, priorities};
use crate::model::{GraphElement, NodePriority, Standing};

/// K for every memory object of `graph`, as `Priority` elements.
///
/// A node is created at its valid time (else its recorded time); it is an open question while
/// its standing is `open`; stakes are the configured default. Relations whose type is not a
/// configured edge are ignored.
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
    let nodes = graph.clone().flat_map(|e| match e {
        GraphElement::Memory(m) => Some(PriorityNode {
            created_ms: m.t_valid.or(m.recorded_at).unwrap_or(0),
            open: m.standing == Standing::Open,
            tenant: m.tenant,
            id: m.id,
            memory_type: m.memory_type,
            blocking: 0,
            stakes: None,
        }),
        _ => None,
    });
    let configured: std::collections::BTreeSet<String> = config.edges.keys().cloned().collect();
    let edges = graph.flat_map(move |e| match e {
        GraphElement::Relation(r) if configured.contains(&r.rel_type) => Some(PriorityEdge {
            tenant: r.tenant,
            from: r.from,
            to: r.to,
            rel_type: r.rel_type,
        }),
        _ => None,
    });
    priorities(nodes, edges, usages, now, config)
        .map(|w| GraphElement::Priority(NodePriority::new(&w.tenant, &w.id, w.priority)))
}
