//! The stores' health as the query service sees it (docs/reliability.md#outages).
//!
//! A prober asks Neo4j (`RETURN 1`) and LanceDB (a row count) every `serve.store_probe_ms`,
//! each bounded by `serve.store_probe_timeout_ms`. While one is unreachable, the query routes
//! answer `503` at once with the reason in the documented error shape (and `Retry-After`),
//! a request already running when a store goes down is cut short the same way, and `/readyz`
//! says which store and why. The first good probe ends it: nothing needs a restart.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use epigraph_query::QueryService;
use serde_json::json;
use tokio::sync::watch;
use tracing::{info, warn};

use super::{ApiError, AppState};

/// Which stores are unreachable, since when and why; shared by the prober and the routes.
#[derive(Clone, Debug)]
pub struct StoreHealth {
    down: Arc<Mutex<BTreeMap<&'static str, (Instant, String)>>>,
    /// The reason while a store is down, `None` while both answer.
    reason: watch::Sender<Option<String>>,
}

impl Default for StoreHealth {
    fn default() -> Self {
        StoreHealth {
            down: Arc::default(),
            reason: watch::Sender::new(None),
        }
    }
}

impl StoreHealth {
    /// Why the stores cannot answer now (`None`: both answer).
    pub fn reason(&self) -> Option<String> {
        self.reason.borrow().clone()
    }

    /// A receiver told of every change of [`Self::reason`]: an outage that starts or ends.
    pub fn watch(&self) -> watch::Receiver<Option<String>> {
        self.reason.subscribe()
    }

    /// Record a probe of `store`: a failure (its reason) opens an outage (logged once), `None`
    /// (it answered) ends one.
    pub fn record(&self, store: &'static str, failure: Option<String>) {
        let mut down = self.down.lock().expect("store health lock");
        match failure {
            None => {
                if let Some((since, _)) = down.remove(store) {
                    info!(
                        store,
                        seconds = since.elapsed().as_secs_f64(),
                        "{store} answers again: the query service serves it"
                    );
                }
            }
            Some(reason) => {
                if !down.contains_key(store) {
                    warn!(store, %reason, "{store} is unreachable: its reads are answered 503");
                }
                let since = down
                    .get(store)
                    .map_or_else(Instant::now, |(since, _)| *since);
                down.insert(store, (since, reason));
            }
        }
        let reason = (!down.is_empty()).then(|| {
            down.iter()
                .map(|(store, (since, reason))| {
                    format!(
                        "{store} is unreachable (for {:.0} s): {reason}",
                        since.elapsed().as_secs_f64()
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        });
        self.reason.send_if_modified(|current| {
            let changed = current.is_some() != reason.is_some();
            *current = reason;
            changed
        });
    }

    /// Probe both stores every `every`, each bounded by `timeout`, for as long as the process
    /// runs.
    pub fn spawn_prober(&self, query: QueryService, every: Duration, timeout: Duration) {
        let health = self.clone();
        tokio::spawn(async move {
            loop {
                let (graph, lance) = tokio::join!(
                    bounded(timeout, async {
                        query.graph().ping().await.err().map(|e| e.to_string())
                    }),
                    bounded(timeout, async {
                        query.lance().count(None).await.err().map(|e| e.to_string())
                    }),
                );
                health.record("neo4j", graph);
                health.record("lancedb", lance);
                tokio::time::sleep(every).await;
            }
        });
    }
}

/// A probe's failure, if any, a probe without an answer within `timeout` being one.
async fn bounded(timeout: Duration, probe: impl Future<Output = Option<String>>) -> Option<String> {
    tokio::time::timeout(timeout, probe)
        .await
        .unwrap_or_else(|_| Some(format!("no answer within {} ms", timeout.as_millis())))
}

fn unavailable(reason: String) -> Response {
    let mut response =
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, retry_later(&reason)).into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    response
}

/// A store that does not answer, with why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreDown(pub String);

/// `work`'s output, unless a store is unreachable when it starts or goes down while it runs:
/// then why, at once (the work is dropped).
pub async fn unless_down<F: Future>(health: &StoreHealth, work: F) -> Result<F::Output, StoreDown> {
    if let Some(reason) = health.reason() {
        return Err(StoreDown(reason));
    }
    let mut watch = health.reason.subscribe();
    let went_down = async move {
        loop {
            if watch.changed().await.is_err() {
                return std::future::pending().await;
            }
            if let Some(reason) = watch.borrow_and_update().clone() {
                return reason;
            }
        }
    };
    tokio::select! {
        output = work => Ok(output),
        reason = went_down => Err(StoreDown(reason)),
    }
}

/// What a caller is told while a store is unreachable.
pub fn retry_later(reason: &str) -> String {
    format!("{reason}; retry later (the query service recovers by itself when it answers)")
}

/// The query routes' guard: `503` with the reason while a store is unreachable, also for a
/// request that was running when it went down.
pub async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    unless_down(&state.stores, next.run(request))
        .await
        .unwrap_or_else(|StoreDown(reason)| unavailable(reason))
}

/// `GET /readyz`: `200` while both stores answer, else `503` with the reason; `writes` says
/// whether the topics writes go to exist (Kafka down at start: reads are served, writes are
/// not, so readiness is the reads').
pub async fn readyz(State(state): State<AppState>) -> Response {
    let writes = match state.topics.reason() {
        None => json!({"ready": true}),
        Some(reason) => json!({"ready": false, "reason": reason}),
    };
    match state.stores.reason() {
        None => Json(json!({"ready": true, "writes": writes})).into_response(),
        Some(reason) => {
            let body = json!({
                "ready": false,
                "error": {"code": 503, "message": reason},
                "writes": writes,
            });
            (StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outage_is_reported_until_the_store_answers_again() {
        let health = StoreHealth::default();
        let mut watch = health.reason.subscribe();
        health.record("neo4j", None);
        assert_eq!(health.reason(), None);
        health.record("neo4j", Some("connection refused".into()));
        let reason = health.reason().unwrap();
        assert!(reason.contains("neo4j is unreachable"), "{reason}");
        assert!(reason.contains("connection refused"), "{reason}");
        assert!(watch.has_changed().unwrap());
        watch.borrow_and_update();
        health.record("lancedb", None);
        health.record("neo4j", None);
        assert_eq!(health.reason(), None);
        assert!(watch.has_changed().unwrap());
    }
}
