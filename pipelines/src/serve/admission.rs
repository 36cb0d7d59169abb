//! Admission: at most `serve.max_concurrent_requests` requests are served at once, at most
//! `serve.max_waiting_requests` more wait for a turn, and any request beyond those is refused at
//! once with `503` and `Retry-After` — instead of joining an unbounded queue, where under a load
//! the service cannot hold every request would wait until its client gave up and the queue's
//! memory grew without bound (found by `benches/src/bin/query_soak.rs`, docs/reliability.md,
//! "Load"). The wait counts against `serve.request_timeout_ms` (`408` when it runs out).
//!
//! Probes and scrapes (`/healthz`, `/readyz`, `/metrics`, `/metrics/pipeline`) are never queued
//! or refused: an overloaded service must still say so.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::sync::Semaphore;

use super::ApiError;
use super::metrics::ServeMetrics;

/// Routes that pass without a turn.
const UNQUEUED: [&str; 4] = ["/healthz", "/readyz", "/metrics", "/metrics/pipeline"];

/// The turns of one service: serving ones and waiting ones.
#[derive(Clone, Debug)]
pub struct Gate {
    /// One per request being served.
    serving: Arc<Semaphore>,
    /// One per request admitted (served or waiting).
    admitted: Arc<Semaphore>,
    waiting_limit: usize,
    metrics: ServeMetrics,
}

impl Gate {
    /// A gate serving `concurrent` requests at once with `waiting` more in line.
    pub fn new(concurrent: usize, waiting: usize, metrics: ServeMetrics) -> Self {
        let concurrent = concurrent.max(1);
        Gate {
            serving: Arc::new(Semaphore::new(concurrent)),
            admitted: Arc::new(Semaphore::new(concurrent + waiting)),
            waiting_limit: waiting,
            metrics,
        }
    }
}

/// Middleware: a turn, a place in line, or `503` at once.
pub async fn admit(State(gate): State<Gate>, request: Request, next: Next) -> Response {
    if UNQUEUED.contains(&request.uri().path()) {
        return next.run(request).await;
    }
    let Ok(_admitted) = gate.admitted.clone().try_acquire_owned() else {
        gate.metrics.overloaded();
        let mut response = ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "overloaded: every turn is taken and {} requests are waiting \
                 (serve.max_concurrent_requests, serve.max_waiting_requests); retry shortly",
                gate.waiting_limit
            ),
        )
        .into_response();
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return response;
    };
    let _serving = match gate.serving.clone().try_acquire_owned() {
        Ok(permit) => permit,
        Err(_) => {
            let _waiting = gate.metrics.waiting();
            gate.serving
                .clone()
                .acquire_owned()
                .await
                .expect("the gate's semaphore is never closed")
        }
    };
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::routing::get;
    use std::time::Duration;
    use tower::ServiceExt;

    fn app(gate: Gate, release: Arc<tokio::sync::Notify>) -> Router {
        Router::new()
            .route(
                "/slow",
                get(move || {
                    let release = release.clone();
                    async move {
                        release.notified().await;
                        "done"
                    }
                }),
            )
            .route("/healthz", get(|| async { "ok" }))
            .layer(axum::middleware::from_fn_with_state(gate, admit))
    }

    fn get_req(path: &str) -> Request {
        Request::builder()
            .uri(path)
            .body(axum::body::Body::empty())
            .unwrap()
    }

    #[tokio::test]
    async fn beyond_the_turns_and_the_line_a_request_is_refused_at_once_and_probes_pass() {
        let metrics = ServeMetrics::default();
        let gate = Gate::new(1, 1, metrics.clone());
        let release = Arc::new(tokio::sync::Notify::new());
        let app = app(gate, release.clone());
        // One served, one waiting.
        let served = tokio::spawn(app.clone().oneshot(get_req("/slow")));
        tokio::time::sleep(Duration::from_millis(50)).await;
        let waiting = tokio::spawn(app.clone().oneshot(get_req("/slow")));
        tokio::time::sleep(Duration::from_millis(50)).await;
        // The third is refused at once, in the documented shape, with Retry-After.
        let refused = tokio::time::timeout(
            Duration::from_secs(1),
            app.clone().oneshot(get_req("/slow")),
        )
        .await
        .expect("refused at once")
        .unwrap();
        assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(refused.headers()[header::RETRY_AFTER], "1");
        let body = axum::body::to_bytes(refused.into_body(), 4096)
            .await
            .unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"]["code"], 503);
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("overloaded")
        );
        // A probe passes while every turn is taken.
        let probe = app.clone().oneshot(get_req("/healthz")).await.unwrap();
        assert_eq!(probe.status(), StatusCode::OK);
        let text = metrics.render();
        assert!(text.contains("epigraph_serve_overloaded_total 1"), "{text}");
        assert!(text.contains("epigraph_serve_waiting 1"), "{text}");
        // Released, both finish; the line is free again.
        for _ in 0..250 {
            release.notify_waiters();
            if served.is_finished() && waiting.is_finished() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(served.await.unwrap().unwrap().status(), StatusCode::OK);
        assert_eq!(waiting.await.unwrap().unwrap().status(), StatusCode::OK);
        assert!(metrics.render().contains("epigraph_serve_waiting 0"));
    }
}
