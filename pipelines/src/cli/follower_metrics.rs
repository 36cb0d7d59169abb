//! The health of a source follower (`epigraph ingest caldav|imap|topic`): whether its server
//! answers, its syncs, what it published, and how long it waits before the next try — as
//! Prometheus metrics (`--metrics-listen ADDR`) and as [`ConnectorStatus`] reports on
//! `<prefix>.connectors`, which the query service's health page reads ([`StatusReporter`]).

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use epigraph_sources::kafka::{ConnectorStatus, EventProducer, KafkaConfig};
use tokio::sync::Notify;

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
    status: Mutex<ConnectorStatus>,
    changed: Notify,
}

/// The longest error text a status report carries.
const ERROR_CHARS: usize = 500;

impl FollowerMetrics {
    /// Metrics for `source` following `target` for `tenant` (`following`: until Ctrl-C, else one
    /// read), with a status report due every `report_every` while nothing changes.
    pub fn new(
        source: &str,
        target: &str,
        tenant: &str,
        following: bool,
        report_every: Duration,
    ) -> Self {
        let now = epigraph_schemas::now_millis();
        let mut status = ConnectorStatus::starting(source, target, tenant, following, now);
        status.report_every_ms = report_every.as_millis().max(1) as u64;
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
            status: Mutex::new(status),
            changed: Notify::new(),
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
        {
            let mut status = self.status.lock().expect("status lock");
            status.up = true;
            status.syncs_ok += 1;
            status.published += published as u64;
            status.tombstoned += tombstoned as u64;
            status.dead_letters += dead_letters as u64;
            status.last_success = Some(epigraph_schemas::now_millis());
            status.retry_in_ms = 0;
            status.last_error = None;
        }
        self.changed.notify_one();
    }

    /// A sync failed with `error`; the next try comes after `retry_in`.
    pub fn failure(&self, retry_in: Duration, error: &anyhow::Error) {
        let l = &self.labels;
        self.up.get_or_create(l).set(0);
        let mut outcome = l.clone();
        outcome.push(("outcome".into(), "error".into()));
        self.syncs.get_or_create(&outcome).inc();
        self.retry_in.get_or_create(l).set(retry_in.as_secs_f64());
        {
            let mut status = self.status.lock().expect("status lock");
            status.up = false;
            status.syncs_failed += 1;
            status.retry_in_ms = retry_in.as_millis() as u64;
            status.last_error = Some(error_text(error));
        }
        self.changed.notify_one();
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut text = String::new();
        encode(&mut text, &self.registry).expect("metrics encode to a string");
        text
    }

    /// The status as it would be reported now.
    pub fn status(&self) -> ConnectorStatus {
        let mut status = self.status.lock().expect("status lock").clone();
        status.at = epigraph_schemas::now_millis();
        status
    }

    /// Report the status on `kafka`'s `<prefix>.connectors` from now on: at once, after every
    /// sync, and every `report_every` in between, until [`StatusReporter::stop`].
    pub fn report_to(self: &Arc<Self>, kafka: &KafkaConfig) -> anyhow::Result<StatusReporter> {
        let producer = Arc::new(EventProducer::new(kafka)?);
        let topic = kafka.connectors_topic();
        let every = Duration::from_millis(self.status.lock().expect("status lock").report_every_ms);
        let task = {
            let (metrics, producer, topic) = (self.clone(), producer.clone(), topic.clone());
            tokio::spawn(async move {
                loop {
                    send(&producer, &topic, &metrics.status(), every).await;
                    tokio::select! {
                        _ = metrics.changed.notified() => {}
                        _ = tokio::time::sleep(every) => {}
                    }
                }
            })
        };
        Ok(StatusReporter {
            metrics: self.clone(),
            producer,
            topic,
            task,
        })
    }
}

/// The error as a report shows it: its chain on one line, cut at [`ERROR_CHARS`].
fn error_text(error: &anyhow::Error) -> String {
    let text = format!("{error:#}");
    match text.char_indices().nth(ERROR_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// Publish one report, waiting at most `within`; a report that cannot be sent (Kafka is down)
/// is dropped: the next one says more, and a reader takes the silence for what it is.
async fn send(
    producer: &EventProducer,
    topic: &str,
    status: &ConnectorStatus,
    within: Duration,
) -> bool {
    let payload = serde_json::to_vec(status).expect("a status serializes");
    match tokio::time::timeout(within, producer.publish_raw(topic, &status.key(), &payload)).await {
        Ok(Ok(_)) => true,
        Ok(Err(error)) => {
            tracing::debug!(%error, "a connector status report was not sent");
            false
        }
        Err(_) => {
            tracing::debug!("a connector status report timed out");
            false
        }
    }
}

/// The background task publishing a follower's [`ConnectorStatus`]; [`StatusReporter::stop`]
/// sends the last report (`stopped`, with the error that ended the command, if any).
#[derive(Debug)]
pub struct StatusReporter {
    metrics: Arc<FollowerMetrics>,
    producer: Arc<EventProducer>,
    topic: String,
    task: tokio::task::JoinHandle<()>,
}

impl StatusReporter {
    /// Stop reporting, after a last report saying the connector stopped (and why, when it
    /// ended on `error`). Tries for at most 15 s (a busy broker), then says it could not.
    pub async fn stop(self, error: Option<&anyhow::Error>) {
        // The task may be running on another worker at this instant (woken by the last sync's
        // change): wait until it is gone, so no `up` report of its own is queued after the last
        // one (with the same or a later `at`, it would list the connector as up for good).
        self.task.abort();
        let _ = self.task.await;
        let mut status = self.metrics.status();
        status.stopped = true;
        if let Some(error) = error {
            status.up = false;
            status.last_error = Some(error_text(error));
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(15);
        while !send(&self.producer, &self.topic, &status, Duration::from_secs(5)).await {
            if std::time::Instant::now() >= deadline {
                tracing::warn!(
                    topic = %self.topic,
                    "the connector's last report (stopped) could not be sent: readers will see it \
                     go silent instead"
                );
                return;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
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
