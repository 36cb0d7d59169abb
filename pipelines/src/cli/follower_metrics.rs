//! Prometheus metrics of a source follower (`epigraph ingest caldav|topic --follow
//! --metrics-listen ADDR`): whether its server answers, its syncs, what it published, and how
//! long it waits before the next try.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

type Labels = Vec<(String, String)>;

/// The metrics of one follower, labelled with its source (`caldav`, `topic`) and target (the
/// collection URL or the topic's name).
#[derive(Debug)]
pub struct FollowerMetrics {
    registry: Registry,
    labels: Labels,
    up: Family<Labels, Gauge>,
    syncs: Family<Labels, Counter>,
    published: Family<Labels, Counter>,
    tombstoned: Family<Labels, Counter>,
    dead_letters: Family<Labels, Counter>,
    last_success: Family<Labels, Gauge<f64, AtomicU64>>,
    retry_in: Family<Labels, Gauge<f64, AtomicU64>>,
}

impl FollowerMetrics {
    /// Metrics for `source` following `target`.
    pub fn new(source: &str, target: &str) -> Self {
        let mut registry = Registry::with_prefix("epigraph_source");
        let metrics = FollowerMetrics {
            registry: Registry::default(),
            labels: vec![
                ("source".to_string(), source.to_string()),
                ("target".to_string(), target.to_string()),
            ],
            up: Family::default(),
            syncs: Family::default(),
            published: Family::default(),
            tombstoned: Family::default(),
            dead_letters: Family::default(),
            last_success: Family::default(),
            retry_in: Family::default(),
        };
        registry.register(
            "up",
            "1 while the last sync succeeded, 0 while the server (or Kafka) fails",
            metrics.up.clone(),
        );
        registry.register(
            "syncs",
            "Syncs by outcome (ok, error)",
            metrics.syncs.clone(),
        );
        registry.register("published", "Events published", metrics.published.clone());
        registry.register(
            "tombstoned",
            "Tombstones published",
            metrics.tombstoned.clone(),
        );
        registry.register(
            "dead_letters",
            "Items dead-lettered",
            metrics.dead_letters.clone(),
        );
        registry.register(
            "last_success_timestamp_seconds",
            "When the last sync succeeded (Unix seconds)",
            metrics.last_success.clone(),
        );
        registry.register(
            "retry_in_seconds",
            "The backoff before the next try while failing (0 when up)",
            metrics.retry_in.clone(),
        );
        FollowerMetrics {
            registry,
            ..metrics
        }
    }

    /// A sync succeeded and published this much.
    pub fn success(&self, published: usize, tombstoned: usize, dead_letters: usize) {
        let l = &self.labels;
        self.up.get_or_create(l).set(1);
        let mut ok = l.clone();
        ok.push(("outcome".into(), "ok".into()));
        self.syncs.get_or_create(&ok).inc();
        self.published.get_or_create(l).inc_by(published as u64);
        self.tombstoned.get_or_create(l).inc_by(tombstoned as u64);
        self.dead_letters
            .get_or_create(l)
            .inc_by(dead_letters as u64);
        self.last_success
            .get_or_create(l)
            .set(epigraph_schemas::now_millis() as f64 / 1000.0);
        self.retry_in.get_or_create(l).set(0.0);
    }

    /// A sync failed; the next try comes after `retry_in`.
    pub fn failure(&self, retry_in: Duration) {
        let l = &self.labels;
        self.up.get_or_create(l).set(0);
        let mut error = l.clone();
        error.push(("outcome".into(), "error".into()));
        self.syncs.get_or_create(&error).inc();
        self.retry_in.get_or_create(l).set(retry_in.as_secs_f64());
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut text = String::new();
        encode(&mut text, &self.registry).expect("metrics encode to a string");
        text
    }
}

/// Serve `GET /metrics` on `listen` in the background; a port that cannot be bound stops the
/// command (the operator asked for the endpoint).
pub async fn serve(listen: &str, metrics: Arc<FollowerMetrics>) -> anyhow::Result<()> {
    serve_text(listen, move || metrics.render()).await
}

/// Serve `GET /metrics` on `listen` in the background, answering what `render` writes (the
/// Prometheus text of a command's own registry: the followers', the model extractor's).
pub async fn serve_text<F>(listen: &str, render: F) -> anyhow::Result<()>
where
    F: Fn() -> String + Send + Sync + 'static,
{
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot serve /metrics on {listen}: {e}"))?;
    let app = Router::new()
        .route(
            "/metrics",
            get(|State(render): State<Arc<F>>| async move { render() }),
        )
        .with_state(Arc::new(render));
    tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, app).await {
            tracing::warn!(%error, "/metrics stopped");
        }
    });
    Ok(())
}
