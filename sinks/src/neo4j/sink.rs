use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use neo4rs::{BoltType, ConfigBuilder, Graph, Query, query};
use tracing::debug;

use super::write::{props_map, safe_identifier};
use super::{GraphBatch, Neo4jConfig, NodeWrite, RelationKey, RelationWrite};
use crate::SinkError;

const SCHEMA: &[&str] = &[
    "CREATE CONSTRAINT epigraph_node_id IF NOT EXISTS FOR (n:Node) REQUIRE n.id IS UNIQUE",
    "CREATE INDEX epigraph_node_tenant IF NOT EXISTS FOR (n:Node) ON (n.tenant)",
    "CREATE INDEX epigraph_memory_k IF NOT EXISTS FOR (n:Memory) ON (n.tenant, n.k)",
    "CREATE INDEX epigraph_entity_name IF NOT EXISTS FOR (n:Entity) ON (n.tenant, n.name)",
];

/// What the graph holds, as content hashes: what reconciliation diffs against.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GraphState {
    /// Node id → content hash.
    pub nodes: HashMap<String, String>,
    /// Relationship → content hash.
    pub relations: HashMap<RelationKey, String>,
    /// Node id → hash of the properties set by [`PropertyWrite`](super::PropertyWrite)s
    /// (`priority_hash`).
    pub properties: HashMap<String, String>,
}

/// The node property holding the hash of a [`PropertyWrite`](super::PropertyWrite)'s values.
pub const PROPERTIES_HASH: &str = "priority_hash";

/// The view a sink writes when none is named: the default topic prefix. Nodes written before
/// views existed (no `view` property) belong to it.
pub const DEFAULT_VIEW: &str = "epigraph";

/// Statements, rows and seconds the sink spent on one kind of graph write, since it was
/// connected (see [`Neo4jSink::census`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WriteTally {
    /// `UNWIND` statements run (one per `batch_rows` rows of the kind in an epoch).
    pub statements: u64,
    /// Rows written.
    pub rows: u64,
    /// Seconds the server took to run them (a transaction's commit is its own kind,
    /// [`COMMIT`]).
    pub seconds: f64,
}

/// The census kind of transaction commits.
pub const COMMIT: &str = "commit";

/// The kind a write is counted under in the [census](Neo4jSink::census): a node by its labels
/// (`Memory:Decision`), a relationship by its type (`rel:MENTIONS`), deletes (`delete:node`,
/// `delete:rel`) and property writes (`set:priority`).
///
/// ```
/// use epigraph_sinks::neo4j::write_kind;
/// assert_eq!(write_kind::node(&["Memory".into(), "Decision".into()]), "Memory:Decision");
/// assert_eq!(write_kind::relation("MENTIONS"), "rel:MENTIONS");
/// ```
pub mod write_kind {
    /// Node upserts with these labels.
    pub fn node(labels: &[String]) -> String {
        if labels.is_empty() {
            "Node".to_string()
        } else {
            labels.join(":")
        }
    }

    /// Relationship upserts of this type.
    pub fn relation(rel_type: &str) -> String {
        format!("rel:{rel_type}")
    }

    /// Node deletes.
    pub const DELETE_NODE: &str = "delete:node";
    /// Relationship deletes.
    pub const DELETE_RELATION: &str = "delete:rel";
    /// Property writes on existing nodes (the priorities).
    pub const SET_PROPERTIES: &str = "set:priority";
}

/// A write statement of an epoch and what the census counts it as.
struct Statement {
    kind: String,
    rows: usize,
    query: Query,
}

/// Writes epochs of graph changes to Neo4j.
///
/// Every node and relationship carries the `view` it belongs to — the topic prefix of the
/// pipeline that wrote it — and reconciliation and clearing only ever look at their own view:
/// two pipelines (a production prefix and an evaluation's) can share one Neo4j without
/// deleting each other's graph.
#[derive(Clone)]
pub struct Neo4jSink {
    graph: Graph,
    batch_rows: usize,
    transaction_rows: usize,
    view: String,
    census: Arc<Mutex<BTreeMap<String, WriteTally>>>,
}

impl std::fmt::Debug for Neo4jSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Neo4jSink")
            .field("batch_rows", &self.batch_rows)
            .finish()
    }
}

impl Neo4jSink {
    /// Connect (lazily: the first query opens the pool) and create constraints and indexes.
    pub async fn connect(config: &Neo4jConfig) -> Result<Self, SinkError> {
        let graph = connect_graph(config)?;
        for statement in SCHEMA {
            match graph.run(*statement).await {
                Ok(()) => {}
                // Two processes connecting at once (a pipeline and an evaluation sharing the
                // server) race on `IF NOT EXISTS`: the loser is told the rule exists, as wanted.
                Err(neo4rs::Error::Neo4j(e))
                    if e.code() == "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists"
                        || e.code() == "Neo.ClientError.Schema.ConstraintAlreadyExists"
                        || e.code() == "Neo.ClientError.Schema.IndexAlreadyExists" => {}
                Err(e) => return Err(SinkError::neo4j("creating constraints")(e)),
            }
        }
        Ok(Neo4jSink {
            graph,
            batch_rows: config.batch_rows.max(1),
            transaction_rows: config.transaction_rows.max(1),
            view: DEFAULT_VIEW.to_string(),
            census: Arc::default(),
        })
    }

    /// What this sink (and its clones) has written so far, by kind of write
    /// ([`write_kind`]): which element kinds a run's graph writes are spent on.
    pub fn census(&self) -> BTreeMap<String, WriteTally> {
        self.census.lock().map(|c| c.clone()).unwrap_or_default()
    }

    fn count(&self, kind: &str, rows: usize, took: std::time::Duration) {
        if let Ok(mut census) = self.census.lock() {
            let tally = census.entry(kind.to_string()).or_default();
            tally.statements += 1;
            tally.rows += rows as u64;
            tally.seconds += took.as_secs_f64();
        }
    }

    /// Whether the server answers a trivial query within `timeout` (a health probe: an
    /// unreachable or restarting server is a retryable [`SinkError::Neo4j`]).
    pub async fn ping(&self, timeout: std::time::Duration) -> Result<(), SinkError> {
        match tokio::time::timeout(timeout, self.graph.run("RETURN 1")).await {
            Ok(answered) => answered.map_err(SinkError::neo4j("probing the server")),
            Err(_) => Err(SinkError::neo4j("probing the server")(
                neo4rs::Error::ConnectionTimedOut,
            )),
        }
    }

    /// The same sink writing (and reconciling) the given view, normally the topic prefix.
    pub fn with_view(mut self, view: impl Into<String>) -> Self {
        self.view = view.into();
        self
    }

    /// The underlying client, for reads.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// Apply one epoch's writes: relationship deletes, node deletes, node upserts, relationship
    /// upserts, property writes — in one transaction, or in several of at most
    /// `transaction_rows` rows each for a large epoch (see [`Neo4jConfig::transaction_rows`]).
    pub async fn apply(&self, batch: &GraphBatch) -> Result<(), SinkError> {
        if batch.is_empty() {
            return Ok(());
        }
        let mut queries = Vec::new();
        for chunk in batch.delete_relations.chunks(self.batch_rows) {
            let rows: Vec<BoltType> = chunk.iter().map(key_row).collect();
            queries.push(Statement {
                kind: write_kind::DELETE_RELATION.into(),
                rows: chunk.len(),
                query: query(DELETE_RELATIONS).param("rows", rows),
            });
        }
        for chunk in batch.delete_nodes.chunks(self.batch_rows) {
            queries.push(Statement {
                kind: write_kind::DELETE_NODE.into(),
                rows: chunk.len(),
                query: query(DELETE_NODES).param("ids", chunk.to_vec()),
            });
        }
        queries.extend(self.node_upserts(&batch.upsert_nodes)?);
        queries.extend(self.relation_upserts(&batch.upsert_relations)?);
        for chunk in batch.set_properties.chunks(self.batch_rows) {
            let rows: Vec<BoltType> = chunk
                .iter()
                .map(|p| {
                    let mut props: HashMap<String, BoltType> = p
                        .props
                        .iter()
                        .map(|(k, v)| (k.clone(), BoltType::from(v)))
                        .collect();
                    props.insert(PROPERTIES_HASH.into(), p.content_hash.clone().into());
                    let mut row: HashMap<&str, BoltType> = HashMap::new();
                    row.insert("id", p.id.clone().into());
                    row.insert("props", props.into());
                    row.into()
                })
                .collect();
            queries.push(Statement {
                kind: write_kind::SET_PROPERTIES.into(),
                rows: chunk.len(),
                query: query(SET_PROPERTIES).param("rows", rows),
            });
        }
        // One transaction per `transaction_rows` rows, in order: deletes before upserts, nodes
        // before the relationships between them. A failure part-way leaves earlier
        // transactions applied; the epoch's offsets are not committed, and the replay rewrites
        // the same elements idempotently (MERGE by id, delete by id).
        let per_transaction = (self.transaction_rows / self.batch_rows).max(1);
        for group in queries.chunks_mut(per_transaction) {
            let mut txn = self
                .graph
                .start_txn()
                .await
                .map_err(SinkError::neo4j("starting a transaction"))?;
            for statement in group.iter_mut() {
                let q = std::mem::replace(&mut statement.query, query("RETURN 1"));
                let started = Instant::now();
                txn.run(q)
                    .await
                    .map_err(SinkError::neo4j("writing an epoch"))?;
                self.count(&statement.kind, statement.rows, started.elapsed());
            }
            let started = Instant::now();
            txn.commit()
                .await
                .map_err(SinkError::neo4j("committing an epoch"))?;
            self.count(COMMIT, 0, started.elapsed());
        }
        debug!(
            nodes = batch.upsert_nodes.len(),
            relations = batch.upsert_relations.len(),
            deleted_nodes = batch.delete_nodes.len(),
            deleted_relations = batch.delete_relations.len(),
            "neo4j epoch written"
        );
        Ok(())
    }

    fn node_upserts(&self, nodes: &[NodeWrite]) -> Result<Vec<Statement>, SinkError> {
        let mut by_labels: BTreeMap<Vec<String>, Vec<&NodeWrite>> = BTreeMap::new();
        for node in nodes {
            if let Some(bad) = node.labels.iter().find(|l| !safe_identifier(l)) {
                return Err(SinkError::Config(format!(
                    "label {bad:?} is not a plain identifier"
                )));
            }
            by_labels.entry(node.labels.clone()).or_default().push(node);
        }
        let mut queries = Vec::new();
        for (labels, group) in by_labels {
            let label_clause = if labels.is_empty() {
                String::new()
            } else {
                format!(" SET n:{}", labels.join(":"))
            };
            // `labels(n)` minus `Node` are removed first so that a node whose kind changed keeps
            // no stale label. `+=` keeps what property writes set (the priority); every kind
            // writes all its keys, absent values as null, which removes them.
            let text = format!(
                "UNWIND $rows AS row MERGE (n:Node {{id: row.id}}) \
                 WITH n, row, [l IN labels(n) WHERE l <> 'Node'] AS stale \
                 CALL (n, stale) {{ WITH n, stale WHERE size(stale) > 0 REMOVE n:$(stale) }} \
                 SET n += row.props{label_clause}"
            );
            for chunk in group.chunks(self.batch_rows) {
                let rows: Vec<BoltType> = chunk
                    .iter()
                    .map(|n| {
                        let mut row: HashMap<&str, BoltType> = HashMap::new();
                        row.insert("id", n.id.clone().into());
                        row.insert(
                            "props",
                            props_map(&n.id, &n.content_hash, &self.view, &n.props),
                        );
                        row.into()
                    })
                    .collect();
                queries.push(Statement {
                    kind: write_kind::node(&labels),
                    rows: chunk.len(),
                    query: query(&text).param("rows", rows),
                });
            }
        }
        Ok(queries)
    }

    fn relation_upserts(&self, relations: &[RelationWrite]) -> Result<Vec<Statement>, SinkError> {
        let mut by_type: BTreeMap<&str, Vec<&RelationWrite>> = BTreeMap::new();
        for relation in relations {
            if !safe_identifier(&relation.rel_type) {
                return Err(SinkError::Config(format!(
                    "relationship type {:?} is not a plain identifier",
                    relation.rel_type
                )));
            }
            by_type
                .entry(&relation.rel_type)
                .or_default()
                .push(relation);
        }
        let mut queries = Vec::new();
        for (rel_type, group) in by_type {
            let text = format!(
                "UNWIND $rows AS row MATCH (a:Node {{id: row.from}}), (b:Node {{id: row.to}}) \
                 MERGE (a)-[r:{rel_type} {{id: row.id}}]->(b) SET r = row.props"
            );
            for chunk in group.chunks(self.batch_rows) {
                let rows: Vec<BoltType> = chunk
                    .iter()
                    .map(|r| {
                        let mut row: HashMap<&str, BoltType> = HashMap::new();
                        row.insert("id", r.key.id.clone().into());
                        row.insert("from", r.key.from.clone().into());
                        row.insert("to", r.key.to.clone().into());
                        row.insert(
                            "props",
                            props_map(&r.key.id, &r.content_hash, &self.view, &r.props),
                        );
                        row.into()
                    })
                    .collect();
                queries.push(Statement {
                    kind: write_kind::relation(rel_type),
                    rows: chunk.len(),
                    query: query(&text).param("rows", rows),
                });
            }
        }
        Ok(queries)
    }

    /// Delete every node and relationship of this view (and of one tenant), in batches of `batch_rows`: the view
    /// is rebuilt from the record afterwards. Returns how many nodes were deleted.
    pub async fn clear(&self, tenant: Option<&str>) -> Result<u64, SinkError> {
        let text = match tenant {
            Some(_) => {
                "MATCH (n:Node {tenant: $tenant}) WHERE coalesce(n.view, $default) = $view \
                 WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS n"
            }
            None => {
                "MATCH (n:Node) WHERE coalesce(n.view, $default) = $view \
                 WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS n"
            }
        };
        let mut deleted = 0u64;
        loop {
            let q = query(text)
                .param("tenant", tenant.unwrap_or_default())
                .param("view", self.view.as_str())
                .param("default", DEFAULT_VIEW)
                .param("batch", self.batch_rows as i64);
            let mut rows = self
                .graph
                .execute(q)
                .await
                .map_err(SinkError::neo4j("clearing the graph"))?;
            let n: i64 = match rows
                .next()
                .await
                .map_err(SinkError::neo4j("clearing the graph"))?
            {
                Some(row) => row.get("n").unwrap_or(0),
                None => 0,
            };
            while rows
                .next()
                .await
                .map_err(SinkError::neo4j("clearing the graph"))?
                .is_some()
            {}
            deleted += n.max(0) as u64;
            if n == 0 {
                return Ok(deleted);
            }
        }
    }

    /// The views other than this sink's that hold nodes of `tenants`: `(tenant, view)` per
    /// tenant held elsewhere (one view named per tenant). Node ids do not include the view, so
    /// a pipeline must not write a tenant another view holds: its `MERGE`s would take that
    /// view's nodes over.
    pub async fn foreign_views(
        &self,
        tenants: &[String],
    ) -> Result<Vec<(String, String)>, SinkError> {
        let mut held = Vec::new();
        if tenants.is_empty() {
            return Ok(held);
        }
        let mut rows = self
            .graph
            .execute(
                query(
                    "UNWIND $tenants AS t CALL (t) { \
                       MATCH (n:Node {tenant: t}) WHERE coalesce(n.view, $default) <> $view \
                       RETURN coalesce(n.view, $default) AS other LIMIT 1 } \
                     RETURN t AS tenant, other",
                )
                .param("tenants", tenants.to_vec())
                .param("view", self.view.as_str())
                .param("default", DEFAULT_VIEW),
            )
            .await
            .map_err(SinkError::neo4j("reading the views of the tenants"))?;
        while let Some(row) = rows
            .next()
            .await
            .map_err(SinkError::neo4j("reading the views of the tenants"))?
        {
            if let (Ok(tenant), Ok(other)) =
                (row.get::<String>("tenant"), row.get::<String>("other"))
            {
                held.push((tenant, other));
            }
        }
        Ok(held)
    }

    /// Every node's and relationship's content hash in this view (for reconciliation).
    pub async fn state(&self) -> Result<GraphState, SinkError> {
        let mut state = GraphState::default();
        let mut rows = self
            .graph
            .execute(
                query(
                    "MATCH (n:Node) WHERE coalesce(n.view, $default) = $view \
                     RETURN n.id AS id, coalesce(n.content_hash, '') AS hash, \
                     n.priority_hash AS properties",
                )
                .param("view", self.view.as_str())
                .param("default", DEFAULT_VIEW),
            )
            .await
            .map_err(SinkError::neo4j("reading node hashes"))?;
        while let Some(row) = rows
            .next()
            .await
            .map_err(SinkError::neo4j("reading node hashes"))?
        {
            let id: String = row
                .get("id")
                .map_err(|e| SinkError::Model(format!("bad node row: {e}")))?;
            let hash: String = row.get("hash").unwrap_or_default();
            if let Ok(Some(properties)) = row.get::<Option<String>>("properties") {
                state.properties.insert(id.clone(), properties);
            }
            state.nodes.insert(id, hash);
        }
        let mut rows = self
            .graph
            .execute(
                query(
                    "MATCH (a:Node)-[r]->(b:Node) WHERE r.id IS NOT NULL \
                     AND coalesce(r.view, $default) = $view \
                     RETURN r.id AS id, a.id AS from, b.id AS to, \
                     coalesce(r.content_hash, '') AS hash",
                )
                .param("view", self.view.as_str())
                .param("default", DEFAULT_VIEW),
            )
            .await
            .map_err(SinkError::neo4j("reading relationship hashes"))?;
        while let Some(row) = rows
            .next()
            .await
            .map_err(SinkError::neo4j("reading relationship hashes"))?
        {
            let key = RelationKey {
                id: row.get("id").unwrap_or_default(),
                from: row.get("from").unwrap_or_default(),
                to: row.get("to").unwrap_or_default(),
            };
            state
                .relations
                .insert(key, row.get("hash").unwrap_or_default());
        }
        Ok(state)
    }
}

const DELETE_RELATIONS: &str = "UNWIND $rows AS row \
     MATCH (a:Node {id: row.from})-[r]->(b:Node {id: row.to}) WHERE r.id = row.id DELETE r";
const SET_PROPERTIES: &str = "UNWIND $rows AS row MATCH (n:Node {id: row.id}) SET n += row.props";
const DELETE_NODES: &str = "UNWIND $ids AS id MATCH (n:Node {id: id}) DETACH DELETE n";

fn key_row(key: &RelationKey) -> BoltType {
    let mut row: HashMap<&str, BoltType> = HashMap::new();
    row.insert("id", key.id.clone().into());
    row.insert("from", key.from.clone().into());
    row.insert("to", key.to.clone().into());
    row.into()
}

/// A pooled client for `config`.
pub fn connect_graph(config: &Neo4jConfig) -> Result<Graph, SinkError> {
    let built = ConfigBuilder::default()
        .uri(&config.uri)
        .user(&config.user)
        .password(&config.password)
        .db(config.database.as_str())
        .max_connections(config.max_connections)
        .fetch_size(1000)
        .build()
        .map_err(SinkError::neo4j("building the client configuration"))?;
    Graph::connect(built).map_err(SinkError::neo4j(format!("connecting to {}", config.uri)))
}
