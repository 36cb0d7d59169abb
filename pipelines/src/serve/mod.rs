//! `epigraph serve`: the query service (axum).
//!
//! - `GET /healthz`: liveness plus row counts.
//! - `GET /v1/search?q=&k=&tenant=&mode=text|vector|hybrid`: hybrid retrieval over LanceDB;
//!   every returned node is reported as a retrieval on the feedback topic (`serve.report_usage`),
//!   which the priorities' usage term reads.
//! - `POST /v1/ingest`: the webhook ([`webhook`]), enabled by `serve.ingest_tokens`.

pub mod webhook;

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context, Result};
use axum::extract::DefaultBodyLimit;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use epigraph_connectors::embed::Embedder;
use epigraph_connectors::lance::{LanceSink, SearchHit, SearchMode, SearchRequest};
use epigraph_schemas::topics::valid_tenant;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tracing::info;

use crate::config::{EpigraphConfig, ServeConfig};

/// Shared state of the handlers.
#[derive(Clone, Debug)]
pub struct AppState {
    lance: LanceSink,
    config: Arc<ServeConfig>,
    webhook: Option<webhook::Webhook>,
    usage: Option<UsageReporter>,
}

/// Reports retrievals to the feedback topic, without making the request wait for Kafka.
#[derive(Clone)]
pub struct UsageReporter {
    producer: Arc<epigraph_connectors::kafka::EventProducer>,
    topic: String,
}

impl std::fmt::Debug for UsageReporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UsageReporter")
            .field("topic", &self.topic)
            .finish()
    }
}

impl UsageReporter {
    /// One `usage` record per returned node, published in the background; a failure is
    /// logged, never answered to the client.
    fn report(&self, tenant: &str, ids: Vec<String>) {
        let at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        let (producer, topic, tenant) = (
            self.producer.clone(),
            self.topic.clone(),
            tenant.to_string(),
        );
        tokio::spawn(async move {
            for node_id in ids {
                let record = epigraph_schemas::feedback::Feedback::Usage {
                    tenant: tenant.clone(),
                    node_id,
                    at,
                };
                let payload = serde_json::to_vec(&record).expect("feedback serializes");
                if let Err(error) = producer.publish_raw(&topic, &record.key(), &payload).await {
                    tracing::warn!(%error, "reporting a retrieval to the feedback topic");
                    return;
                }
            }
        });
    }
}

/// An error answered as JSON: `{"error": {"code": …, "message": …}}`.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
        }
    }

    fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }
}

impl From<epigraph_connectors::ConnectorError> for ApiError {
    fn from(error: epigraph_connectors::ConnectorError) -> Self {
        ApiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            message: error.to_string(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {"code": self.status.as_u16(), "message": self.message}});
        (self.status, Json(body)).into_response()
    }
}

/// Query parameters of `/v1/search`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchParams {
    /// Query text.
    q: String,
    /// Results wanted (default 10).
    k: Option<usize>,
    /// Tenant (default: the configured default tenant).
    tenant: Option<String>,
    /// `text`, `vector` or `hybrid` (default).
    mode: Option<SearchMode>,
}

/// The answer of `/v1/search`.
#[derive(Debug, Serialize)]
pub struct SearchResponse {
    /// The query, echoed.
    query: String,
    /// Tenant searched.
    tenant: String,
    /// Ranked results.
    results: Vec<SearchResult>,
}

/// One ranked result.
#[derive(Debug, Serialize)]
pub struct SearchResult {
    id: String,
    source_id: String,
    #[serde(rename = "type")]
    memory_type: String,
    title: Option<String>,
    snippet: String,
    score: f32,
    bm25: Option<f32>,
    cosine: Option<f32>,
}

impl From<SearchHit> for SearchResult {
    fn from(hit: SearchHit) -> Self {
        SearchResult {
            snippet: snippet(&hit.text, 300),
            id: hit.id,
            source_id: hit.source_id,
            memory_type: hit.memory_type,
            title: hit.title,
            score: hit.score,
            bm25: hit.bm25,
            cosine: hit.cosine,
        }
    }
}

/// The first `max` characters of `text`, cut at a word boundary, with an ellipsis when cut.
///
/// ```
/// assert_eq!(epigraph::serve::snippet("alpha beta gamma", 12), "alpha beta …");
/// assert_eq!(epigraph::serve::snippet("short", 12), "short");
/// ```
pub fn snippet(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    let cut = cut
        .rsplit_once(char::is_whitespace)
        .map(|(head, _)| head)
        .unwrap_or(&cut);
    format!("{} …", cut.trim_end())
}

async fn search(
    State(state): State<AppState>,
    Query(params): Query<SearchParams>,
) -> Result<Json<SearchResponse>, ApiError> {
    let tenant = params
        .tenant
        .unwrap_or_else(|| state.config.default_tenant.clone());
    if !valid_tenant(&tenant) {
        return Err(ApiError::bad_request(format!("invalid tenant {tenant:?}")));
    }
    if params.q.trim().is_empty() {
        return Err(ApiError::bad_request("q must not be empty"));
    }
    let k = params.k.unwrap_or(10);
    if k == 0 || k > state.config.max_k {
        return Err(ApiError::bad_request(format!(
            "k must be between 1 and {}",
            state.config.max_k
        )));
    }
    let request = SearchRequest {
        query: params.q.clone(),
        k,
        tenant: tenant.clone(),
        mode: params.mode.unwrap_or(SearchMode::Hybrid),
    };
    let hits = state.lance.search(&request).await?;
    if let Some(usage) = &state.usage {
        usage.report(&tenant, hits.iter().map(|h| h.id.clone()).collect());
    }
    Ok(Json(SearchResponse {
        query: params.q,
        tenant,
        results: hits.into_iter().map(SearchResult::from).collect(),
    }))
}

async fn healthz(State(state): State<AppState>) -> Result<Json<serde_json::Value>, ApiError> {
    let rows = state.lance.count(None).await?;
    Ok(Json(json!({"status": "ok", "memory_rows": rows})))
}

/// The router, for tests and for [`serve`].
pub fn router(state: AppState) -> Router {
    let body_limit = state.config.max_body_bytes;
    Router::new()
        .route("/healthz", get(healthz))
        .route("/v1/search", get(search))
        .route("/v1/ingest", post(webhook::ingest))
        .layer(DefaultBodyLimit::max(body_limit))
        .with_state(state)
}

/// Open the stores and serve until the process is stopped.
pub async fn serve(config: EpigraphConfig, listen: Option<String>) -> Result<()> {
    let embedder = if config.lancedb.embed {
        let model = config.model.clone();
        Some(Arc::new(
            tokio::task::spawn_blocking(move || Embedder::load(&model)).await??,
        ))
    } else {
        None
    };
    let lance = LanceSink::open(&config.lancedb, embedder).await?;
    let listen = listen.unwrap_or_else(|| config.serve.listen.clone());
    let addr: SocketAddr = listen
        .parse()
        .with_context(|| format!("listen address {listen:?}"))?;
    let usage = if config.serve.report_usage {
        let producer = epigraph_connectors::kafka::EventProducer::new(&config.kafka)?;
        Some(UsageReporter {
            producer: Arc::new(producer),
            topic: config.kafka.feedback_topic(),
        })
    } else {
        None
    };
    let webhook = if config.serve.ingest_tokens.is_empty() {
        None
    } else {
        epigraph_connectors::kafka::ensure_topics(&config.kafka)
            .await
            .context("creating topics for the webhook (is Kafka up?)")?;
        let producer = epigraph_connectors::kafka::EventProducer::new(&config.kafka)?;
        let tokens = config.serve.ingest_tokens.clone();
        Some(webhook::Webhook::new(
            producer,
            tokens,
            config.kafka.dead_letter_max_bytes,
        ))
    };
    let state = AppState {
        lance,
        config: Arc::new(config.serve.clone()),
        webhook,
        usage,
    };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    info!(%addr, "serving");
    println!("epigraph serve: listening on http://{addr}  (try /v1/search?q=...)");
    axum::serve(listener, router(state))
        .with_graceful_shutdown(shutdown_signal())
        .await?;
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("SIGTERM handler");
    tokio::select! {
        _ = ctrl_c => {},
        _ = term.recv() => {},
    }
}
