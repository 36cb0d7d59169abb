//! Prometheus metrics of `epigraph run`, served as text on `GET /metrics` at
//! `run.metrics_listen`.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use epigraph_operators::GraphElement;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use tracing::{info, warn};

type Labels = Vec<(String, String)>;

fn seconds() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 16))
}

fn sizes() -> Histogram {
    Histogram::new(exponential_buckets(1.0, 4.0, 10))
}

/// The metrics of one run.
#[derive(Debug)]
pub struct RunMetrics {
    registry: Registry,
    /// Messages read, by topic.
    pub events_in: Family<Labels, Counter>,
    /// Messages dead-lettered.
    pub dead_letters: Counter,
    /// Epochs sealed (the restore is epoch 0).
    pub epochs: Counter,
    /// Seconds from sealing an epoch to its output.
    pub epoch_seconds: Histogram,
    /// Seconds a sink took to apply an epoch, by sink.
    pub sink_seconds: Family<Labels, Histogram, fn() -> Histogram>,
    /// Writes per applied epoch, by sink.
    pub sink_batch: Family<Labels, Histogram, fn() -> Histogram>,
    /// Messages not yet read, by topic and partition.
    pub lag: Family<Labels, Gauge>,
    /// Live graph elements, by kind (`Memory:Decision`, `Entity:Person`, `rel:SUPERSEDES`, …).
    pub elements: Family<Labels, Gauge>,
    /// Rows written to Neo4j since the run started, by kind of write (`Memory:Decision`,
    /// `rel:MENTIONS`, `delete:node`, `set:priority`, …; [`Neo4jSink::census`]).
    ///
    /// [`Neo4jSink::census`]: epigraph_sinks::neo4j::Neo4jSink::census
    pub graph_write_rows: Family<Labels, Gauge>,
    /// Seconds Neo4j took to run those writes, by kind (`commit`: the transactions' commits).
    pub graph_write_seconds: Family<Labels, Gauge<f64, std::sync::atomic::AtomicU64>>,
    /// LanceDB rows waiting for a vector (the vector lag in rows).
    pub vector_pending: Gauge,
    /// Seconds the oldest row waiting for a vector has waited since it was written (0 when
    /// none waits).
    pub vector_lag_seconds: Gauge<f64, std::sync::atomic::AtomicU64>,
    /// Distinct texts run through the embedding model.
    pub vectors_embedded: Counter,
    /// Rows that got their vector from the cache (same text hash) instead of the model.
    pub vectors_reused: Counter,
    /// Seconds per embedding batch of the background filler.
    pub embed_batch_seconds: Histogram,
    /// Compactions of the LanceDB table.
    pub lance_compactions: Counter,
    /// Times the rows written since were folded into LanceDB's indexes, by `when`: `idle` (the
    /// topics drained) or `busy` (every `lancedb.index_every_secs` while epochs keep coming);
    /// compactions not counted.
    pub lance_optimizations: Family<Labels, Counter>,
    /// 1 when the dependency (`kafka`, `neo4j`, `lancedb`) answered its last operation, 0
    /// during an outage.
    pub dependency_up: Family<Labels, Gauge>,
    /// Failed attempts retried after a backoff, by dependency.
    pub dependency_retries: Family<Labels, Counter>,
    /// Outages begun, by dependency.
    pub outages: Family<Labels, Counter>,
    /// Seconds of ended outages, by dependency.
    pub outage_seconds: Family<Labels, Counter<f64, std::sync::atomic::AtomicU64>>,
    /// The outages in progress and the restore, for `/readyz`.
    pub health: super::outage::Health,
}

impl Default for RunMetrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("epigraph");
        let metrics = RunMetrics {
            events_in: Family::default(),
            dead_letters: Counter::default(),
            epochs: Counter::default(),
            epoch_seconds: seconds(),
            sink_seconds: Family::new_with_constructor(seconds as fn() -> Histogram),
            sink_batch: Family::new_with_constructor(sizes as fn() -> Histogram),
            lag: Family::default(),
            elements: Family::default(),
            graph_write_rows: Family::default(),
            graph_write_seconds: Family::default(),
            vector_pending: Gauge::default(),
            vector_lag_seconds: Gauge::default(),
            vectors_embedded: Counter::default(),
            vectors_reused: Counter::default(),
            embed_batch_seconds: seconds(),
            lance_compactions: Counter::default(),
            lance_optimizations: Family::default(),
            dependency_up: Family::default(),
            dependency_retries: Family::default(),
            outages: Family::default(),
            outage_seconds: Family::default(),
            health: super::outage::Health::default(),
            registry: Registry::default(),
        };
        for when in ["idle", "busy"] {
            let _ = metrics
                .lance_optimizations
                .get_or_create(&vec![("when".to_string(), when.to_string())]);
        }
        for dependency in super::outage::Dependency::ALL {
            let labels = vec![("dependency".to_string(), dependency.name().to_string())];
            metrics.dependency_up.get_or_create(&labels).set(1);
            let _ = metrics.dependency_retries.get_or_create(&labels);
            let _ = metrics.outages.get_or_create(&labels);
            let _ = metrics.outage_seconds.get_or_create(&labels);
        }
        registry.register(
            "events_in",
            "Messages read, by topic",
            metrics.events_in.clone(),
        );
        registry.register(
            "dead_letters",
            "Messages dead-lettered with their reason",
            metrics.dead_letters.clone(),
        );
        registry.register("epochs", "Epochs sealed", metrics.epochs.clone());
        registry.register(
            "epoch_seconds",
            "Seconds from sealing an epoch to its output",
            metrics.epoch_seconds.clone(),
        );
        registry.register(
            "sink_seconds",
            "Seconds a sink took to apply an epoch",
            metrics.sink_seconds.clone(),
        );
        registry.register(
            "sink_batch_writes",
            "Writes per applied epoch",
            metrics.sink_batch.clone(),
        );
        registry.register(
            "consumer_lag",
            "Messages not yet read, by topic and partition",
            metrics.lag.clone(),
        );
        registry.register(
            "graph_elements",
            "Live graph elements by kind",
            metrics.elements.clone(),
        );
        registry.register(
            "graph_write_rows",
            "Rows written to Neo4j since the run started, by kind of write",
            metrics.graph_write_rows.clone(),
        );
        registry.register(
            "graph_write_seconds",
            "Seconds Neo4j took to run the writes, by kind of write (commit: the commits)",
            metrics.graph_write_seconds.clone(),
        );
        registry.register(
            "vector_pending_rows",
            "LanceDB rows waiting for a vector",
            metrics.vector_pending.clone(),
        );
        registry.register(
            "vector_lag_seconds",
            "Seconds the oldest row waiting for a vector has waited",
            metrics.vector_lag_seconds.clone(),
        );
        registry.register(
            "vectors_embedded",
            "Texts run through the embedding model",
            metrics.vectors_embedded.clone(),
        );
        registry.register(
            "vectors_reused",
            "Rows whose vector came from the cache (same text hash) instead of the model",
            metrics.vectors_reused.clone(),
        );
        registry.register(
            "embed_batch_seconds",
            "Seconds per embedding batch",
            metrics.embed_batch_seconds.clone(),
        );
        registry.register(
            "lancedb_compactions",
            "Compactions of the LanceDB table",
            metrics.lance_compactions.clone(),
        );
        registry.register(
            "lancedb_index_updates",
            "Times the rows written since were folded into the LanceDB indexes, by when (idle, busy)",
            metrics.lance_optimizations.clone(),
        );
        registry.register(
            "dependency_up",
            "1 when the dependency answered its last operation, 0 during an outage",
            metrics.dependency_up.clone(),
        );
        registry.register(
            "dependency_retries",
            "Failed operations retried after a backoff, by dependency",
            metrics.dependency_retries.clone(),
        );
        registry.register(
            "outages",
            "Outages begun, by dependency",
            metrics.outages.clone(),
        );
        registry.register(
            "outage_seconds",
            "Seconds of ended outages, by dependency",
            metrics.outage_seconds.clone(),
        );
        RunMetrics {
            registry,
            ..metrics
        }
    }
}

impl RunMetrics {
    /// The text exposition format.
    ///
    /// ```
    /// let metrics = epigraph::runtime::metrics::RunMetrics::default();
    /// metrics.dead_letters.inc();
    /// assert!(metrics.render().contains("epigraph_dead_letters_total 1"));
    /// ```
    pub fn render(&self) -> String {
        let mut out = String::new();
        encode(&mut out, &self.registry).expect("writing to a String");
        out
    }

    /// Counts a message of `topic`.
    pub fn event(&self, topic: &str) {
        self.events_in
            .get_or_create(&vec![("topic".into(), topic.into())])
            .inc();
    }

    /// Records one sink's apply.
    pub fn sink(&self, sink: &str, took: Duration, writes: usize) {
        let labels = vec![("sink".to_string(), sink.to_string())];
        self.sink_seconds
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
        self.sink_batch
            .get_or_create(&labels)
            .observe(writes as f64);
    }

    /// Sets the graph-write gauges from a Neo4j sink's census (cumulative since it connected).
    ///
    /// ```
    /// use epigraph_sinks::neo4j::WriteTally;
    /// let metrics = epigraph::runtime::metrics::RunMetrics::default();
    /// let tally = WriteTally { statements: 2, rows: 1500, seconds: 0.25 };
    /// metrics.graph_writes(&[("rel:MENTIONS".to_string(), tally)].into());
    /// let text = metrics.render();
    /// assert!(text.contains("epigraph_graph_write_rows{kind=\"rel:MENTIONS\"} 1500"), "{text}");
    /// assert!(text.contains("epigraph_graph_write_seconds{kind=\"rel:MENTIONS\"} 0.25"), "{text}");
    /// ```
    pub fn graph_writes(
        &self,
        census: &std::collections::BTreeMap<String, epigraph_sinks::neo4j::WriteTally>,
    ) {
        for (kind, tally) in census {
            let labels = vec![("kind".to_string(), kind.clone())];
            self.graph_write_rows
                .get_or_create(&labels)
                .set(tally.rows as i64);
            self.graph_write_seconds
                .get_or_create(&labels)
                .set(tally.seconds);
        }
    }

    /// Applies an epoch's consolidated output to the element counts.
    ///
    /// ```
    /// use epigraph_operators::{GraphElement, Relation};
    /// let metrics = epigraph::runtime::metrics::RunMetrics::default();
    /// let edge = GraphElement::Relation(Relation::structural("t", "SUPERSEDES", "a", "b", None));
    /// metrics.count_elements(&[(edge, 1)]);
    /// assert!(metrics.render().contains(r#"epigraph_graph_elements{kind="rel:SUPERSEDES"} 1"#));
    /// ```
    pub fn count_elements(&self, updates: &[(GraphElement, isize)]) {
        for (element, diff) in updates {
            let kind = match element {
                GraphElement::Source(_) => "Source".to_string(),
                GraphElement::Memory(m) => format!("Memory:{}", m.memory_type.label()),
                GraphElement::Entity(e) => format!("Entity:{}", e.kind),
                GraphElement::Claim(_) => "Claim".to_string(),
                GraphElement::Relation(r) => format!("rel:{}", r.rel_type),
                GraphElement::Priority(_) => "Priority".to_string(),
            };
            self.elements
                .get_or_create(&vec![("kind".into(), kind)])
                .inc_by(*diff as i64);
        }
    }

    /// Sets the lag of one partition.
    pub fn set_lag(&self, topic: &str, partition: i32, lag: i64) {
        self.lag
            .get_or_create(&vec![
                ("topic".into(), topic.into()),
                ("partition".into(), partition.to_string()),
            ])
            .set(lag);
    }
}

/// The vector lag, embeddings and cache hits of the LanceDB sink.
///
/// ```
/// use epigraph_sinks::lance::VectorObserver;
/// use std::time::Duration;
/// let metrics = epigraph::runtime::metrics::RunMetrics::default();
/// metrics.backlog(12, Duration::from_millis(1500));
/// metrics.embedded(8, Duration::from_millis(90));
/// metrics.reused(4);
/// let text = metrics.render();
/// assert!(text.contains("epigraph_vector_pending_rows 12"));
/// assert!(text.contains("epigraph_vector_lag_seconds 1.5"));
/// assert!(text.contains("epigraph_vectors_embedded_total 8"));
/// assert!(text.contains("epigraph_vectors_reused_total 4"));
/// assert!(text.contains("epigraph_embed_batch_seconds_count 1"));
/// ```
impl epigraph_sinks::lance::VectorObserver for RunMetrics {
    fn backlog(&self, rows: usize, oldest: Duration) {
        self.vector_pending.set(rows as i64);
        self.vector_lag_seconds
            .set(if rows == 0 { 0.0 } else { oldest.as_secs_f64() });
    }

    fn embedded(&self, texts: usize, took: Duration) {
        self.vectors_embedded.inc_by(texts as u64);
        self.embed_batch_seconds.observe(took.as_secs_f64());
    }

    fn reused(&self, rows: usize) {
        self.vectors_reused.inc_by(rows as u64);
    }
}

/// `GET /readyz`: 200 when the run is restored and every dependency answers, else 503; the
/// body is the [`Readiness`](super::outage::Readiness) as JSON, with the reason in words.
async fn readyz(State(metrics): State<Arc<RunMetrics>>) -> axum::response::Response {
    use axum::response::IntoResponse;
    let readiness = metrics.health.readiness();
    let status = if readiness.ready {
        axum::http::StatusCode::OK
    } else {
        axum::http::StatusCode::SERVICE_UNAVAILABLE
    };
    (status, axum::Json(readiness)).into_response()
}

/// Serves `GET /metrics` (and `GET /readyz`) on `listen` in the background; a port that cannot be bound is logged,
/// not fatal (the run goes on without the endpoint).
pub async fn serve_metrics(listen: &str, metrics: Arc<RunMetrics>) {
    let listener = match tokio::net::TcpListener::bind(listen).await {
        Ok(listener) => listener,
        Err(error) => {
            warn!(%listen, %error, "cannot serve /metrics");
            return;
        }
    };
    info!(%listen, "serving /metrics");
    let app = Router::new()
        .route(
            "/metrics",
            get(|State(m): State<Arc<RunMetrics>>| async move { m.render() }),
        )
        .route("/readyz", get(readyz))
        .with_state(metrics);
    tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, app).await {
            warn!(%error, "/metrics stopped");
        }
    });
}
