//! Riding out outages of Kafka, Neo4j and LanceDB (docs/reliability.md#outages).
//!
//! An operation that fails because a dependency is unreachable is retried with bounded
//! exponential backoff ([`retry`]); meanwhile the run commits nothing (the epoch's offsets are
//! committed only after both sinks acknowledged it), reports the outage on `/metrics`
//! (`epigraph_dependency_up`, `…_retries_total`, `epigraph_outages_total`,
//! `epigraph_outage_seconds_total`), logs one line when it starts and one when it ends, and
//! `/readyz` answers 503 with the reason. After `run.outage_max_secs` the run gives up and
//! stops with the error, as it did before retries existed.

use std::collections::BTreeMap;
use std::fmt::Display;
use std::future::Future;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use backon::{BackoffBuilder, ExponentialBuilder};
use epigraph_sinks::SinkError;
use epigraph_sinks::lance::VectorFiller;
use epigraph_sinks::neo4j::Neo4jSink;
use epigraph_sources::SourceError;
use epigraph_sources::kafka::{EventConsumer, EventDecodeError};
use serde::Serialize;
use tracing::{error, info, warn};

use super::metrics::RunMetrics;
use crate::config::RunConfig;

/// A service the run depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dependency {
    /// The broker: the record, offsets, dead letters.
    Kafka,
    /// The graph view.
    Neo4j,
    /// The text and vector view (its folder).
    Lancedb,
    /// The schema registry (`[kafka.schema_registry]`), asked for the schema of an id the run
    /// has not seen.
    SchemaRegistry,
}

impl Dependency {
    /// The dependencies every run has, whose metrics exist from the start (the schema
    /// registry's appear at its first outage: most runs have none).
    pub const ALL: [Dependency; 3] = [Dependency::Kafka, Dependency::Neo4j, Dependency::Lancedb];

    /// Its name in metrics, logs and `/readyz`.
    pub fn name(self) -> &'static str {
        match self {
            Dependency::Kafka => "kafka",
            Dependency::Neo4j => "neo4j",
            Dependency::Lancedb => "lancedb",
            Dependency::SchemaRegistry => "schema_registry",
        }
    }
}

/// A failure that may be an outage of one dependency.
pub trait Unreachable: Display {
    /// The dependency that could not be reached when retrying may help; `None` when the
    /// failure is not an outage (a refused statement, a bad value): then nothing is retried.
    fn unreachable(&self) -> Option<Dependency>;
}

impl Unreachable for SinkError {
    fn unreachable(&self) -> Option<Dependency> {
        if !self.retryable() {
            return None;
        }
        match self {
            SinkError::Neo4j { .. } => Some(Dependency::Neo4j),
            SinkError::Lance { .. } | SinkError::Io { .. } | SinkError::Filler { .. } => {
                Some(Dependency::Lancedb)
            }
            _ => None,
        }
    }
}

impl Unreachable for SourceError {
    fn unreachable(&self) -> Option<Dependency> {
        matches!(self, SourceError::Kafka { .. }).then_some(Dependency::Kafka)
    }
}

/// A schema the registry could not give (down, or answering 5xx) is its outage; a message the
/// registry does not know, or cannot be decoded, is the message's fault (dead-lettered).
impl Unreachable for EventDecodeError {
    fn unreachable(&self) -> Option<Dependency> {
        (!self.is_bad_input()).then_some(Dependency::SchemaRegistry)
    }
}

impl Unreachable for anyhow::Error {
    fn unreachable(&self) -> Option<Dependency> {
        self.chain().find_map(|cause| {
            cause
                .downcast_ref::<SinkError>()
                .and_then(Unreachable::unreachable)
                .or_else(|| {
                    cause
                        .downcast_ref::<SourceError>()
                        .and_then(Unreachable::unreachable)
                })
        })
    }
}

/// How failed operations are retried: delays from `min` doubling up to `max`, for at most
/// `give_up` per operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The first delay.
    pub min: Duration,
    /// The longest delay.
    pub max: Duration,
    /// How long one operation is retried before its error is returned.
    pub give_up: Duration,
}

impl RetryPolicy {
    /// The policy of `[run]`.
    pub fn of(run: &RunConfig) -> Self {
        let min = Duration::from_millis(run.retry_min_ms.max(1));
        RetryPolicy {
            min,
            max: Duration::from_millis(run.retry_max_ms).max(min),
            give_up: Duration::from_secs(run.outage_max_secs),
        }
    }

    /// The delays between attempts: exponential, capped at `max`, never ending (the caller
    /// stops at `give_up`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use epigraph::runtime::outage::RetryPolicy;
    /// let policy = RetryPolicy {
    ///     min: Duration::from_millis(250),
    ///     max: Duration::from_secs(2),
    ///     give_up: Duration::from_secs(60),
    /// };
    /// let delays: Vec<u128> = policy.delays().take(6).map(|d| d.as_millis()).collect();
    /// assert_eq!(delays, [250, 500, 1000, 2000, 2000, 2000]);
    /// ```
    pub fn delays(&self) -> backon::ExponentialBackoff {
        ExponentialBuilder::default()
            .with_min_delay(self.min)
            .with_max_delay(self.max)
            .with_factor(2.0)
            .without_max_times()
            .build()
    }
}

/// An outage in progress, as `/readyz` reports it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Outage {
    /// The unreachable dependency.
    pub dependency: Dependency,
    /// Seconds since the first failure.
    pub seconds: f64,
    /// Failed attempts so far.
    pub retries: u64,
    /// What the run was doing.
    pub during: String,
    /// The last error.
    pub reason: String,
}

/// Whether the run is ready: restored, and no dependency unreachable.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Readiness {
    /// Ready to keep the views current.
    pub ready: bool,
    /// The restore from the compacted topics is done.
    pub restored: bool,
    /// Outages in progress.
    pub outages: Vec<Outage>,
    /// In words: why not ready (empty when ready).
    pub reason: String,
}

#[derive(Debug)]
struct Down {
    since: Instant,
    retries: u64,
    during: String,
    reason: String,
}

/// The dependencies' state, shared with `/readyz`.
#[derive(Debug, Default)]
pub struct Health {
    down: Mutex<BTreeMap<Dependency, Down>>,
    restored: AtomicBool,
}

impl Health {
    /// The restore is done.
    pub fn restored(&self) {
        self.restored.store(true, Ordering::SeqCst);
    }

    /// Whether an outage of `dependency` is in progress.
    pub fn is_down(&self, dependency: Dependency) -> bool {
        self.down
            .lock()
            .expect("health lock")
            .contains_key(&dependency)
    }

    /// What `/readyz` says.
    pub fn readiness(&self) -> Readiness {
        let restored = self.restored.load(Ordering::SeqCst);
        let down = self.down.lock().expect("health lock");
        let outages: Vec<Outage> = down
            .iter()
            .map(|(dependency, d)| Outage {
                dependency: *dependency,
                seconds: d.since.elapsed().as_secs_f64(),
                retries: d.retries,
                during: d.during.clone(),
                reason: d.reason.clone(),
            })
            .collect();
        let mut reasons: Vec<String> = outages
            .iter()
            .map(|o| {
                format!(
                    "{} unreachable for {:.1} s ({} retries, {}): {}",
                    o.dependency.name(),
                    o.seconds,
                    o.retries,
                    o.during,
                    o.reason
                )
            })
            .collect();
        if !restored {
            reasons.insert(0, "restoring state from the compacted topics".into());
        }
        Readiness {
            ready: reasons.is_empty(),
            restored,
            outages,
            reason: reasons.join("; "),
        }
    }
}

impl RunMetrics {
    /// An operation on `dependency` failed because it is unreachable: the first failure opens
    /// an outage (logged once), every failure counts a retry.
    pub fn unreachable(&self, dependency: Dependency, during: &str, reason: &dyn Display) {
        let labels = vec![("dependency".to_string(), dependency.name().to_string())];
        self.dependency_retries.get_or_create(&labels).inc();
        self.dependency_up.get_or_create(&labels).set(0);
        let mut down = self.health.down.lock().expect("health lock");
        match down.get_mut(&dependency) {
            Some(outage) => {
                outage.retries += 1;
                outage.during = during.to_string();
                outage.reason = reason.to_string();
            }
            None => {
                self.outages.get_or_create(&labels).inc();
                warn!(
                    dependency = dependency.name(),
                    during,
                    %reason,
                    "outage began: {} is unreachable; retrying with backoff, committing nothing it did not write",
                    dependency.name()
                );
                down.insert(
                    dependency,
                    Down {
                        since: Instant::now(),
                        retries: 1,
                        during: during.to_string(),
                        reason: reason.to_string(),
                    },
                );
            }
        }
    }

    /// An operation on `dependency` succeeded: an outage in progress ends (logged once).
    pub fn reached(&self, dependency: Dependency) {
        let mut down = self.health.down.lock().expect("health lock");
        let Some(outage) = down.remove(&dependency) else {
            return;
        };
        let labels = vec![("dependency".to_string(), dependency.name().to_string())];
        let seconds = outage.since.elapsed().as_secs_f64();
        self.dependency_up.get_or_create(&labels).set(1);
        self.outage_seconds.get_or_create(&labels).inc_by(seconds);
        info!(
            dependency = dependency.name(),
            seconds,
            retries = outage.retries,
            "outage ended: {} is reachable again after {seconds:.1} s and {} retries",
            dependency.name(),
            outage.retries
        );
    }
}

/// Report the vector filler's failed passes as a LanceDB outage (the filler retries by
/// itself), and its first good pass after them as the end of it; `seen` holds the passes seen
/// and whether the last one failed.
pub(crate) fn watch_filler(
    filler: Option<&VectorFiller>,
    seen: &mut (u64, bool),
    metrics: &RunMetrics,
) {
    let Some(status) = filler.map(VectorFiller::status) else {
        return;
    };
    if status.passes == seen.0 {
        return;
    }
    let failing = status.error.is_some() && status.retryable;
    if let Some(reason) = status.error.as_deref().filter(|_| failing) {
        metrics.unreachable(Dependency::Lancedb, "filling vectors", &reason);
    } else if seen.1 {
        metrics.reached(Dependency::Lancedb);
    }
    *seen = (status.passes, failing);
}

/// Ask Neo4j whether it answers (and Kafka, during its outage: an idle poll says nothing), so
/// that `/readyz` and the metrics tell an outage no write has met yet, and its end.
pub(crate) async fn probe(neo4j: &Neo4jSink, consumer: &EventConsumer, metrics: &RunMetrics) {
    match neo4j.ping(Duration::from_secs(5)).await {
        Ok(()) => metrics.reached(Dependency::Neo4j),
        Err(error) => metrics.unreachable(Dependency::Neo4j, "probing while idle", &error),
    }
    if metrics.health.is_down(Dependency::Kafka) {
        match consumer.high_watermarks() {
            Ok(_) => metrics.reached(Dependency::Kafka),
            Err(error) => metrics.unreachable(Dependency::Kafka, "probing while idle", &error),
        }
    }
}

/// Run `op` until it succeeds, retrying failures that are outages ([`Unreachable`]) after the
/// policy's delays, for at most `policy.give_up`; any other failure is returned at once.
/// `during` names the operation in logs and `/readyz`.
pub async fn retry<T, E, F, Fut>(
    metrics: &RunMetrics,
    policy: RetryPolicy,
    during: &str,
    mut op: F,
) -> Result<T, E>
where
    E: Unreachable,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let started = Instant::now();
    let mut delays = policy.delays();
    let mut failed: Vec<Dependency> = Vec::new();
    loop {
        match op().await {
            Ok(value) => {
                for dependency in failed {
                    metrics.reached(dependency);
                }
                return Ok(value);
            }
            Err(failure) => {
                let Some(dependency) = failure.unreachable() else {
                    return Err(failure);
                };
                if started.elapsed() >= policy.give_up {
                    error!(
                        dependency = dependency.name(),
                        during,
                        seconds = started.elapsed().as_secs_f64(),
                        "giving up after run.outage_max_secs"
                    );
                    return Err(failure);
                }
                metrics.unreachable(dependency, during, &failure);
                if !failed.contains(&dependency) {
                    failed.push(dependency);
                }
                tokio::time::sleep(delays.next().unwrap_or(policy.max)).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("{0}")]
    struct Fake(&'static str, Option<Dependency>);

    impl Unreachable for Fake {
        fn unreachable(&self) -> Option<Dependency> {
            self.1
        }
    }

    fn quick(give_up_ms: u64) -> RetryPolicy {
        RetryPolicy {
            min: Duration::from_millis(1),
            max: Duration::from_millis(4),
            give_up: Duration::from_millis(give_up_ms),
        }
    }

    #[tokio::test]
    async fn an_outage_is_retried_reported_and_ended() {
        let metrics = RunMetrics::default();
        let mut attempts = 0;
        let value = retry(&metrics, quick(10_000), "writing an epoch", || {
            attempts += 1;
            let n = attempts;
            let health = metrics.health.readiness();
            async move {
                if n < 4 {
                    Err(Fake("connection refused", Some(Dependency::Neo4j)))
                } else {
                    Ok((n, health))
                }
            }
        })
        .await
        .unwrap();
        assert_eq!(value.0, 4);
        // While failing, /readyz named the store and the reason.
        assert!(!value.1.ready);
        assert!(
            value.1.reason.contains("neo4j unreachable"),
            "{}",
            value.1.reason
        );
        assert!(value.1.reason.contains("connection refused"));
        let text = metrics.render();
        assert!(text.contains(r#"epigraph_dependency_retries_total{dependency="neo4j"} 3"#));
        assert!(text.contains(r#"epigraph_outages_total{dependency="neo4j"} 1"#));
        assert!(text.contains(r#"epigraph_dependency_up{dependency="neo4j"} 1"#));
        metrics.health.restored();
        assert!(metrics.health.readiness().ready);
    }

    #[tokio::test]
    async fn a_refusal_is_not_retried_and_an_outage_ends_after_give_up() {
        let metrics = RunMetrics::default();
        let mut attempts = 0;
        let refused: Result<(), _> = retry(&metrics, quick(10_000), "x", || {
            attempts += 1;
            async { Err(Fake("syntax error", None)) }
        })
        .await;
        assert!(refused.is_err());
        assert_eq!(attempts, 1);
        let gave_up: Result<(), _> = retry(&metrics, quick(30), "x", || async {
            Err(Fake("down", Some(Dependency::Kafka)))
        })
        .await;
        assert!(gave_up.is_err());
        assert!(!metrics.health.readiness().ready);
    }
}
