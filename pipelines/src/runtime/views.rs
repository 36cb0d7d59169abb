//! Graph elements as the two sinks see them, and reconciliation of a sink with a full state.

use std::collections::{BTreeMap, HashMap, HashSet};

use epigraph_operators::{GraphElement, MemoryObject, NodePriority, SinkChanges, SourceVersion};
use epigraph_sinks::SinkError;
use epigraph_sinks::lance::{ChunkRow, Chunking, LanceSink, MemoryRow};
use epigraph_sinks::neo4j::{
    GraphBatch, Neo4jSink, NodeWrite, PropValue, PropertyWrite, RelationKey, RelationWrite,
};

/// A pipeline would write a tenant that Neo4j holds under another view (topic prefix). Node
/// ids do not include the view, so its writes would take the other view's nodes over: the run
/// refuses, at start-up for the tenants of its record, or at the first epoch of a new tenant.
#[derive(Debug, thiserror::Error)]
#[error(
    "tenant {tenant:?} is already in Neo4j under view {other:?} (its topic prefix); this pipeline \
     writes view {view:?}, and node ids do not include the view, so writing the tenant here would \
     take view {other:?}'s nodes over. A tenant belongs to one topic prefix per Neo4j database: \
     give the tenant another name under this prefix, point this prefix at another database \
     (neo4j.database), or delete view {other:?}'s copy first (MATCH (n:Node {{tenant: \
     '{tenant}', view: '{other}'}}) DETACH DELETE n, and its LanceDB rows)"
)]
pub struct ViewConflict {
    /// The tenant.
    pub tenant: String,
    /// The view holding it.
    pub other: String,
    /// This pipeline's view.
    pub view: String,
}

/// Refuse (with [`ViewConflict`]) when Neo4j holds one of `tenants` under another view than
/// `neo4j`'s; the tenants checked are added to `owned`, and tenants already in it are not
/// asked again.
pub async fn claim_tenants<'a>(
    neo4j: &Neo4jSink,
    view: &str,
    tenants: impl IntoIterator<Item = &'a str>,
    owned: &mut HashSet<String>,
) -> anyhow::Result<()> {
    let new: Vec<String> = tenants
        .into_iter()
        .filter(|t| !owned.contains(*t))
        .map(str::to_string)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    if let Some((tenant, other)) = neo4j.foreign_views(&new).await?.into_iter().next() {
        return Err(ViewConflict {
            tenant,
            other,
            view: view.to_string(),
        }
        .into());
    }
    owned.extend(new);
    Ok(())
}

/// The writes of one epoch for both sinks.
#[derive(Debug, Default)]
pub struct SinkWrites {
    /// For Neo4j.
    pub graph: GraphBatch,
    /// Rows to upsert in LanceDB.
    pub lance_upserts: Vec<MemoryRow>,
    /// Row ids to delete in LanceDB.
    pub lance_deletes: Vec<String>,
    /// Chunks of source text to upsert in LanceDB.
    pub chunk_upserts: Vec<ChunkRow>,
    /// Chunk ids to delete in LanceDB.
    pub chunk_deletes: Vec<String>,
}

impl SinkWrites {
    /// The writes of an epoch's net changes.
    pub fn from_changes(changes: &SinkChanges) -> Self {
        let mut writes = SinkWrites::default();
        for element in &changes.upserts {
            writes.upsert(element);
        }
        for element in &changes.deletes {
            match element {
                GraphElement::Relation(r) => writes.graph.delete_relations.push(relation_key(r)),
                // A priority goes with its node (every live memory node has one).
                GraphElement::Priority(_) => {}
                other => {
                    writes.graph.delete_nodes.push(other.id().to_string());
                    if matches!(other, GraphElement::Memory(_)) {
                        writes.lance_deletes.push(other.id().to_string());
                    }
                }
            }
        }
        writes
    }

    fn upsert(&mut self, element: &GraphElement) {
        match element {
            GraphElement::Priority(p) => self
                .graph
                .set_properties
                .push(priority_write(p, element.content_hash())),
            GraphElement::Relation(r) => self
                .graph
                .upsert_relations
                .push(relation_write(r, element.content_hash())),
            GraphElement::Memory(m) => {
                let hash = element.content_hash();
                self.graph
                    .upsert_nodes
                    .push(node_write(element, hash.clone()));
                self.lance_upserts.push(memory_row(m, hash));
            }
            GraphElement::Source(_) | GraphElement::Entity(_) | GraphElement::Claim(_) => self
                .graph
                .upsert_nodes
                .push(node_write(element, element.content_hash())),
        }
    }

    /// Whether there is nothing to write.
    pub fn is_empty(&self) -> bool {
        self.graph.is_empty()
            && self.lance_upserts.is_empty()
            && self.lance_deletes.is_empty()
            && self.chunk_upserts.is_empty()
            && self.chunk_deletes.is_empty()
    }

    /// The chunk writes of an epoch's source updates: the chunks of a retracted version are
    /// deleted, those of an added one upserted (netted per chunk id, so a version retracted
    /// and added again in one epoch writes nothing).
    pub fn set_chunks(&mut self, updates: &[(SourceVersion, isize)], chunking: Chunking) {
        let mut net: BTreeMap<String, (isize, Option<ChunkRow>)> = BTreeMap::new();
        for (version, diff) in updates {
            for chunk in source_chunks(version, chunking) {
                let entry = net.entry(chunk.id.clone()).or_default();
                entry.0 += diff;
                if *diff > 0 {
                    entry.1 = Some(chunk);
                }
            }
        }
        for (id, (diff, chunk)) in net {
            match (diff.signum(), chunk) {
                (1, Some(chunk)) => self.chunk_upserts.push(chunk),
                (-1, _) => self.chunk_deletes.push(id),
                _ => {}
            }
        }
    }

    /// Apply to both sinks concurrently; returns when both acknowledged, with the time each
    /// took.
    pub async fn apply(
        &self,
        neo4j: &Neo4jSink,
        lance: &LanceSink,
    ) -> Result<(std::time::Duration, std::time::Duration), SinkError> {
        let timed = |started: std::time::Instant| started.elapsed();
        let (graph, rows) = tokio::try_join!(
            async {
                let started = std::time::Instant::now();
                neo4j.apply(&self.graph).await.map(|()| timed(started))
            },
            async {
                let started = std::time::Instant::now();
                lance
                    .apply(&self.lance_upserts, &self.lance_deletes)
                    .await?;
                lance
                    .apply_chunks(&self.chunk_upserts, &self.chunk_deletes)
                    .await
                    .map(|_waiting| timed(started))
            }
        )?;
        Ok((graph, rows))
    }
}

/// The chunks of a source version's body.
pub fn source_chunks(version: &SourceVersion, chunking: Chunking) -> Vec<ChunkRow> {
    chunking.chunks(
        &version.tenant,
        &version.source_id,
        &version.version,
        version.title.as_deref(),
        &version.body,
    )
}

/// The chunk writes that make the `chunks` table hold exactly the chunks of `live` versions.
pub async fn reconcile_chunks<'a>(
    live: impl Iterator<Item = &'a SourceVersion>,
    chunking: Chunking,
    lance: &LanceSink,
    writes: &mut SinkWrites,
) -> Result<(), SinkError> {
    let have = lance.chunk_state().await?;
    let mut wanted = HashSet::new();
    for version in live {
        for chunk in source_chunks(version, chunking) {
            wanted.insert(chunk.id.clone());
            if have.get(&chunk.id) != Some(&chunk.content_hash) {
                writes.chunk_upserts.push(chunk);
            }
        }
    }
    writes.chunk_deletes = sorted_missing(have.keys(), &wanted);
    Ok(())
}

/// The writes that make both sinks equal `desired`: what is missing or differs is upserted,
/// what the sinks hold beyond it is deleted, what already matches is not touched.
pub async fn reconcile(
    desired: &[GraphElement],
    neo4j: &Neo4jSink,
    lance: &LanceSink,
) -> Result<SinkWrites, SinkError> {
    let (graph_state, lance_state) = tokio::try_join!(neo4j.state(), lance.state())?;
    let mut writes = SinkWrites::default();
    let mut wanted_nodes = HashSet::new();
    let mut wanted_relations = HashSet::new();
    let mut wanted_rows = HashSet::new();
    for element in desired {
        let hash = element.content_hash();
        match element {
            GraphElement::Priority(p) => {
                if graph_state.properties.get(&p.node) != Some(&hash) {
                    writes.graph.set_properties.push(priority_write(p, hash));
                }
            }
            GraphElement::Relation(r) => {
                let key = relation_key(r);
                if graph_state.relations.get(&key) != Some(&hash) {
                    writes.graph.upsert_relations.push(relation_write(r, hash));
                }
                wanted_relations.insert(key);
            }
            GraphElement::Memory(m) => {
                if graph_state.nodes.get(&m.id) != Some(&hash) {
                    writes
                        .graph
                        .upsert_nodes
                        .push(node_write(element, hash.clone()));
                }
                if lance_state.get(&m.id) != Some(&hash) {
                    writes.lance_upserts.push(memory_row(m, hash));
                }
                wanted_nodes.insert(m.id.clone());
                wanted_rows.insert(m.id.clone());
            }
            GraphElement::Source(_) | GraphElement::Entity(_) | GraphElement::Claim(_) => {
                let id = element.id();
                if graph_state.nodes.get(id) != Some(&hash) {
                    writes.graph.upsert_nodes.push(node_write(element, hash));
                }
                wanted_nodes.insert(id.to_string());
            }
        }
    }
    writes.graph.delete_nodes = sorted_missing(graph_state.nodes.keys(), &wanted_nodes);
    writes.graph.delete_relations = graph_state
        .relations
        .keys()
        .filter(|k| !wanted_relations.contains(*k))
        .cloned()
        .collect();
    writes.graph.delete_relations.sort();
    writes.lance_deletes = sorted_missing(lance_state.keys(), &wanted_rows);
    Ok(writes)
}

fn sorted_missing<'a>(
    have: impl Iterator<Item = &'a String>,
    wanted: &HashSet<String>,
) -> Vec<String> {
    let mut missing: Vec<String> = have.filter(|id| !wanted.contains(*id)).cloned().collect();
    missing.sort();
    missing
}

fn relation_key(r: &epigraph_operators::Relation) -> RelationKey {
    RelationKey {
        id: r.id.clone(),
        from: r.from.clone(),
        to: r.to.clone(),
    }
}

fn relation_write(r: &epigraph_operators::Relation, content_hash: String) -> RelationWrite {
    let mut props = BTreeMap::from([
        ("tenant".to_string(), PropValue::Text(r.tenant.clone())),
        ("support".to_string(), PropValue::Int(r.support.into())),
        ("t_valid".to_string(), r.t_valid.into()),
        ("t_invalid".to_string(), r.t_invalid.into()),
        ("recorded_at".to_string(), r.recorded_at.into()),
        (
            "temporal_type".to_string(),
            r.temporal_type.map(|t| t.as_str().to_string()).into(),
        ),
        ("review".to_string(), r.review.clone().into()),
    ]);
    // Identity links and citation edges carry evidence; other relations keep their content
    // hash.
    if !r.evidence.is_empty() {
        props.insert(
            "evidence".to_string(),
            PropValue::TextList(r.evidence.clone()),
        );
    }
    if let Some(p) = &r.provenance {
        provenance_props(&mut props, p);
    }
    RelationWrite {
        key: relation_key(r),
        rel_type: r.rel_type.clone(),
        props,
        content_hash,
    }
}

fn node_write(element: &GraphElement, content_hash: String) -> NodeWrite {
    let mut props: BTreeMap<String, PropValue> = BTreeMap::new();
    let text = |s: &str| PropValue::Text(s.to_string());
    let labels = match element {
        GraphElement::Source(s) => {
            props.insert("tenant".into(), text(&s.tenant));
            props.insert("source_id".into(), text(&s.source_id));
            props.insert("kind".into(), text(s.kind.as_str()));
            props.insert("version".into(), text(&s.version));
            props.insert("title".into(), s.title.clone().into());
            props.insert("occurred_at".into(), s.occurred_at.into());
            props.insert("recorded_at".into(), s.recorded_at.into());
            vec!["Source".to_string(), capitalised(s.kind.as_str())]
        }
        GraphElement::Memory(m) => {
            props.insert("tenant".into(), text(&m.tenant));
            props.insert("type".into(), text(&m.memory_type.name()));
            props.insert("text".into(), text(&m.text));
            props.insert("title".into(), m.title.clone().into());
            props.insert("source_id".into(), text(&m.source_id));
            props.insert("source_version".into(), text(&m.source_version));
            props.insert("span_start".into(), PropValue::Int(m.span.0.into()));
            props.insert("span_end".into(), PropValue::Int(m.span.1.into()));
            props.insert("extractor".into(), text(&m.extractor));
            props.insert("t_valid".into(), m.t_valid.into());
            props.insert("t_invalid".into(), m.t_invalid.into());
            props.insert("standing".into(), text(m.standing.as_str()));
            props.insert("recorded_at".into(), m.recorded_at.into());
            props.insert("section".into(), m.section.clone().into());
            props.insert("statement_type".into(), text(m.statement_type.as_str()));
            props.insert("temporal_type".into(), text(m.temporal_type.as_str()));
            props.insert("confidence".into(), milli(m.confidence));
            props.insert("header".into(), PropValue::Bool(m.header));
            vec!["Memory".to_string(), m.memory_type.label().to_string()]
        }
        GraphElement::Entity(e) => {
            props.insert("tenant".into(), text(&e.tenant));
            props.insert("kind".into(), text(&e.kind));
            props.insert("name".into(), text(&e.name));
            props.insert("aliases".into(), PropValue::TextList(e.aliases.clone()));
            props.insert("addresses".into(), PropValue::TextList(e.addresses.clone()));
            props.insert("mentions".into(), PropValue::Int(e.mentions.into()));
            props.insert("sources".into(), PropValue::Int(e.sources.into()));
            props.insert("t_valid".into(), e.t_valid.into());
            props.insert("recorded_at".into(), e.recorded_at.into());
            vec!["Entity".to_string(), e.kind.clone()]
        }
        GraphElement::Claim(c) => {
            props.insert("tenant".into(), text(&c.tenant));
            props.insert("memory_id".into(), text(&c.memory_id));
            props.insert("subject".into(), text(&c.subject));
            props.insert("subject_name".into(), text(&c.subject_name));
            props.insert("attribute".into(), text(&c.attribute));
            props.insert("value".into(), text(&c.value));
            props.insert("unit".into(), text(&c.unit));
            props.insert("qualifier".into(), c.qualifier.clone().into());
            props.insert("temporal_type".into(), text(c.temporal_type.as_str()));
            props.insert("t_valid".into(), c.t_valid.into());
            props.insert("t_invalid".into(), c.t_invalid.into());
            props.insert("standing".into(), text(c.standing.as_str()));
            props.insert("recorded_at".into(), c.recorded_at.into());
            provenance_props(&mut props, &c.provenance);
            vec!["Claim".to_string()]
        }
        GraphElement::Relation(_) | GraphElement::Priority(_) => {
            unreachable!("relations and priorities are not nodes")
        }
    };
    NodeWrite {
        id: element.id().to_string(),
        labels,
        props,
        content_hash,
    }
}

/// K and its terms as properties of the memory node: `k`, `k_upper`, `k_s`, `k_h`, `k_u`,
/// `k_e`, `k_g`, `k_c`, `k_decay`, `k_dt` (days) and `k_unclamped` (K* before the clamp, the
/// tiebreak among saturated nodes), as floats.
fn priority_write(p: &NodePriority, content_hash: String) -> PropertyWrite {
    let q = &p.priority;
    let terms = [
        ("k", q.k),
        ("k_upper", q.k_upper),
        ("k_s", q.s),
        ("k_h", q.h),
        ("k_u", q.u),
        ("k_e", q.e),
        ("k_g", q.g),
        ("k_c", q.c),
        ("k_decay", q.decay),
        ("k_dt", q.dt),
        ("k_unclamped", q.unclamped),
    ];
    PropertyWrite {
        id: p.node.clone(),
        props: terms
            .into_iter()
            .map(|(name, value)| (name.to_string(), PropValue::Float(value.to_f64())))
            .collect(),
        content_hash,
    }
}

fn milli(value: u16) -> PropValue {
    PropValue::Float(f64::from(value) / 1000.0)
}

fn provenance_props(props: &mut BTreeMap<String, PropValue>, p: &epigraph_operators::Provenance) {
    props.insert("source_id".into(), PropValue::Text(p.source_id.clone()));
    props.insert(
        "source_version".into(),
        PropValue::Text(p.source_version.clone()),
    );
    props.insert("span_start".into(), PropValue::Int(p.span.0.into()));
    props.insert("span_end".into(), PropValue::Int(p.span.1.into()));
    props.insert("extractor".into(), PropValue::Text(p.extractor.clone()));
    props.insert("confidence".into(), milli(p.confidence));
}

fn memory_row(m: &MemoryObject, content_hash: String) -> MemoryRow {
    MemoryRow {
        id: m.id.clone(),
        tenant: m.tenant.clone(),
        memory_type: m.memory_type.name(),
        title: m.title.clone(),
        text: m.text.clone(),
        source_id: m.source_id.clone(),
        source_version: m.source_version.clone(),
        span_start: m.span.0.into(),
        span_end: m.span.1.into(),
        t_valid: m.t_valid,
        t_invalid: m.t_invalid,
        content_hash,
    }
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// Live elements from a list of updates (multiplicity > 0 after consolidation).
pub fn live_elements(updates: Vec<(GraphElement, isize)>) -> Vec<GraphElement> {
    let mut totals: HashMap<GraphElement, isize> = HashMap::new();
    for (element, diff) in updates {
        *totals.entry(element).or_default() += diff;
    }
    let mut live: Vec<GraphElement> = totals
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(e, _)| e)
        .collect();
    live.sort();
    live
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, HashMap};
    use std::sync::Arc;

    use differential_dataflow::input::Input;
    use epigraph_operators::model::Priority;
    use epigraph_operators::{Extractor, GraphElement, NodePriority, SourceVersion, extract_graph};
    use epigraph_schemas::SourceKind;
    use epigraph_schemas::graph::{
        NODES, PRIORITY_PROPERTIES, PROVENANCE_PROPERTIES, RELATIONSHIP_PROPERTIES,
    };
    use timely::dataflow::operators::capture::{Capture, Extract};

    use super::{node_write, priority_write, relation_write};

    /// The graph elements the dataflow makes of two short documents.
    fn elements() -> Vec<GraphElement> {
        let docs = vec![
            SourceVersion::new(
                "acme",
                "memo",
                SourceKind::Document,
                "Board memo\n\nAlice Smith works for Acme Corp. We decided that the seed round is \
                 EUR 320K on a SAFE. The launch date is 2026-03-01. Who owns the on-call rota?",
            ),
            SourceVersion::new(
                "acme",
                "plan",
                SourceKind::Document,
                "Plan\n\nAlice Smith, CEO of Acme Corp, says the seed round is EUR 200K on a SAFE.",
            ),
        ];
        let captured = timely::execute_directly(move |worker| {
            let extractor = Arc::new(Extractor::bundled());
            let (mut input, captured) = worker.dataflow::<u64, _, _>(|scope| {
                let (input, sources) = scope.new_collection::<SourceVersion, isize>();
                (input, extract_graph(sources, extractor).inner.capture())
            });
            for doc in docs.clone() {
                input.insert(doc);
            }
            input.advance_to(1);
            input.flush();
            drop(input);
            while worker.step() {}
            captured
        });
        captured
            .extract()
            .into_iter()
            .flat_map(|(_, updates)| updates)
            .filter(|(_, _, diff)| *diff > 0)
            .map(|(element, _, _)| element)
            .collect()
    }

    #[test]
    fn the_writer_writes_exactly_the_properties_of_the_graph_schema() {
        let schema: HashMap<&str, BTreeSet<&str>> = NODES
            .iter()
            .map(|n| (n.label, n.properties.iter().copied().collect()))
            .collect();
        let mut seen_labels = BTreeSet::new();
        let mut relation_props = BTreeSet::new();
        for element in elements() {
            match &element {
                GraphElement::Relation(r) => {
                    let write = relation_write(r, String::new());
                    relation_props.extend(write.props.keys().cloned());
                }
                GraphElement::Priority(_) => {}
                _ => {
                    let write = node_write(&element, String::new());
                    let label = write.labels[0].as_str();
                    let written: BTreeSet<&str> = write.props.keys().map(String::as_str).collect();
                    let expected = schema
                        .get(label)
                        .unwrap_or_else(|| panic!("label {label} is not in the graph schema"));
                    assert_eq!(&written, expected, "properties of a {label} node");
                    seen_labels.insert(label.to_string());
                }
            }
        }
        for node in NODES {
            assert!(
                seen_labels.contains(node.label),
                "no {} node written",
                node.label
            );
        }
        // Identity links carry their evidence (the sample has none to merge).
        let mut same = epigraph_operators::Relation::structural("acme", "SAME_AS", "a", "b", None);
        same.evidence = vec!["same address a@acme.example — b".into()];
        relation_props.extend(relation_write(&same, String::new()).props.keys().cloned());
        let allowed: BTreeSet<String> = RELATIONSHIP_PROPERTIES
            .iter()
            .chain(PROVENANCE_PROPERTIES.iter())
            .map(|p| p.to_string())
            .collect();
        assert!(relation_props.is_subset(&allowed), "{relation_props:?}");
        for p in RELATIONSHIP_PROPERTIES {
            assert!(relation_props.contains(p), "relationships never carry {p}");
        }
        let priority = priority_write(
            &NodePriority::new("acme", "memory:x", Priority::default()),
            String::new(),
        );
        let written: BTreeSet<&str> = priority.props.keys().map(String::as_str).collect();
        assert_eq!(written, PRIORITY_PROPERTIES.iter().copied().collect());
    }
}
