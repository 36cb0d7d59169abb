//! `epigraph serve`: the query service (axum) over Neo4j (graph state) and LanceDB (full text
//! and vectors).
//!
//! The answers come from the query core, [`epigraph_query::QueryService`]; this module is its
//! HTTP and MCP transport (routes, authentication, errors as statuses, live feeds, OpenAPI).
//!
//! - `GET /v1/search`: hybrid retrieval modulated by graph state (OIDA Eq. 2,
//!   [`epigraph_query::rank`]); `level=source` aggregates to documents; `explain=true` returns
//!   the score components.
//! - `POST /v1/context`: a token-budgeted context block ([`epigraph_query::context`]).
//! - `GET /v1/nodes/{id}`, `/v1/nodes/{id}/neighborhood`, `/v1/entities`, `/v1/contradictions`,
//!   `/v1/questions`, `/v1/questions/answered`, `/v1/plans/overdue`, `/v1/priorities`,
//!   `/v1/timeline`, `/v1/traverse` ([`api`]).
//! - `GET|POST|DELETE /v1/reviews`: review actions on the system's judgements ([`reviews`]).
//! - `GET|POST /v1/proposals`, `GET /v1/proposals/{id}`, `POST /v1/proposals/{id}/approve|
//!   reject|withdraw`: governed writes ([`proposals`]).
//! - `GET /v1/priorities/history`, `/v1/priorities/movers`: K over time ([`history`]).
//! - `GET /v1/dead-letters`: what was refused, why, and the raw item ([`dead_letters`]).
//! - `GET|DELETE /v1/connectors`: the source followers as they last reported themselves, and
//!   forgetting a stopped one ([`connectors`]).
//! - `/mcp`: the same as MCP tools, streamable HTTP ([`mcp`]).
//! - `GET /openapi.json`, `GET /dashboard` (live priorities, contradictions and open questions,
//!   pushed by `GET /v1/dashboard/stream`, [`live`]),
//!   `GET /healthz`, and `POST /v1/ingest`, the webhook ([`webhook`]).
//!
//! Reads are tenant-scoped by bearer token ([`auth`]); every returned memory object is reported
//! as a retrieval on the feedback topic (`serve.report_usage`), which the priorities' usage term
//! reads.

pub mod admission;
pub mod api;
pub mod auth;
pub mod connectors;
pub mod dead_letters;
pub mod extract;
pub mod follow;
pub mod history;
pub mod live;
pub mod mcp;
pub mod metrics;
pub mod openapi;
pub mod panics;
pub mod proposals;
pub mod reviews;
pub mod stores;
pub mod tls;
pub mod topics;
pub mod webhook;
pub mod workspace;

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context, Result};
use axum::extract::{DefaultBodyLimit, State};
use axum::handler::Handler;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router, middleware};
use epigraph_query::graph::GraphReader;
use epigraph_query::{QueryError, QueryService, UsageSink};
use epigraph_schemas::Fault;
use epigraph_sinks::embed::Embedder;
use epigraph_sinks::lance::LanceSink;
use serde::Serialize;
use serde_json::json;
use tracing::info;

use crate::config::{EpigraphConfig, ServeConfig};

/// Shared state of the handlers.
#[derive(Clone, Debug)]
pub struct AppState {
    query: QueryService,
    config: Arc<ServeConfig>,
    webhook: Option<webhook::Webhook>,
    live: live::LiveHub,
    reviews: Option<reviews::ReviewDesk>,
    proposals: Option<proposals::ProposalDesk>,
    dead_letters: dead_letters::DeadLetterLog,
    connectors: connectors::ConnectorLog,
    history: history::PriorityHistory,
    stores: stores::StoreHealth,
    /// Whether the topics writes go to exist yet (Kafka down at start).
    topics: topics::Topics,
}

impl AppState {
    /// State over opened stores.
    pub fn new(
        lance: LanceSink,
        graph: GraphReader,
        config: ServeConfig,
        webhook: Option<webhook::Webhook>,
        usage: Option<UsageReporter>,
    ) -> Self {
        let usage: Option<Arc<dyn UsageSink>> = usage.map(|u| Arc::new(u) as Arc<dyn UsageSink>);
        let history = history::PriorityHistory::default();
        AppState {
            query: QueryService::new(lance, graph, config.query_config(), usage)
                .with_history(Arc::new(history.clone())),
            config: Arc::new(config),
            webhook,
            live: live::LiveHub::default(),
            reviews: None,
            proposals: None,
            dead_letters: dead_letters::DeadLetterLog::default(),
            connectors: connectors::ConnectorLog::default(),
            history,
            stores: stores::StoreHealth::default(),
            topics: topics::Topics::default(),
        }
    }

    /// With writes gated on `topics` (the webhook, reviews and proposals answer 503 until
    /// they exist).
    /// (The desks are gated by their own [`reviews::ReviewDesk::gate`] and
    /// [`proposals::ProposalDesk::gate`].)
    pub fn with_topics(mut self, topics: topics::Topics) -> Self {
        self.topics = topics;
        self
    }

    /// With review actions (`/v1/reviews`) published and listed by `desk`.
    pub fn with_reviews(mut self, desk: reviews::ReviewDesk) -> Self {
        self.reviews = Some(desk);
        self
    }

    /// With governed writes (`/v1/proposals`) recorded and applied by `desk`.
    pub fn with_proposals(mut self, desk: proposals::ProposalDesk) -> Self {
        self.proposals = Some(desk);
        self
    }

    /// The live feeds of the dashboard: [`live::LiveHub::shut`] them before a graceful shutdown.
    pub fn live(&self) -> &live::LiveHub {
        &self.live
    }

    /// Rows of the LanceDB memory table matching a filter.
    pub async fn lance_rows(&self, filter: &str) -> Result<usize, ApiError> {
        Ok(self.query.lance().count(Some(filter.to_string())).await?)
    }

    /// The query core the handlers answer from.
    pub fn query(&self) -> &QueryService {
        &self.query
    }
}

/// Reports retrievals to the feedback topic, without making the request wait for Kafka.
#[derive(Clone)]
pub struct UsageReporter {
    producer: Arc<epigraph_sources::kafka::EventProducer>,
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
    /// A reporter publishing to `topic`.
    pub fn new(producer: epigraph_sources::kafka::EventProducer, topic: String) -> Self {
        UsageReporter {
            producer: Arc::new(producer),
            topic,
        }
    }
}

impl UsageSink for UsageReporter {
    /// One `usage` record per returned node, published in the background; a failure is
    /// logged, never answered to the client.
    fn retrieved(&self, tenant: &str, ids: Vec<String>) {
        let at = epigraph_schemas::now_millis();
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

/// An error answered as JSON: `{"error": {"code": …, "message": …}}`. Every error a client can
/// cause has this shape, also the rejections of malformed requests ([`extract`]).
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

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// The JSON body of every error.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// What went wrong.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorDetail {
    /// HTTP status code.
    pub code: u16,
    /// A sentence saying what was wrong.
    pub message: String,
}

impl From<epigraph_sinks::SinkError> for ApiError {
    fn from(error: epigraph_sinks::SinkError) -> Self {
        ApiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            message: error.to_string(),
        }
    }
}

impl From<QueryError> for ApiError {
    /// Invalid requests are `400`, missing nodes `404`, store failures `503` (retry), schema
    /// drift `500`.
    fn from(error: QueryError) -> Self {
        let status = match (&error, error.fault()) {
            (QueryError::NotFound(_), _) => StatusCode::NOT_FOUND,
            (_, Fault::UserInput) => StatusCode::BAD_REQUEST,
            (_, Fault::ExternalService) => StatusCode::SERVICE_UNAVAILABLE,
            (_, Fault::Internal) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError {
            status,
            message: error.to_string(),
        }
    }
}

impl From<epigraph_sources::SourceError> for ApiError {
    fn from(error: epigraph_sources::SourceError) -> Self {
        ApiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            message: error.to_string(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {"code": self.status.as_u16(), "message": self.message}});
        let mut response = (self.status, Json(body)).into_response();
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            // A store or Kafka that does not answer now: worth a retry, a little later.
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from_static("5"),
            );
        }
        response
    }
}

async fn healthz(State(state): State<AppState>) -> Result<Json<serde_json::Value>, ApiError> {
    let rows = state.query.lance().count(None).await?;
    Ok(Json(json!({"status": "ok", "memory_rows": rows})))
}

async fn dashboard() -> Html<&'static str> {
    Html(include_str!("dashboard.html"))
}

/// The router, for tests and for [`serve`].
pub fn router(state: AppState) -> Router {
    let body_limit = state.config.max_body_bytes;
    let timeout = std::time::Duration::from_millis(state.config.request_timeout_ms);
    let concurrency = state.config.max_concurrent_requests.max(1);
    let waiting = state.config.max_waiting_requests;
    let serve_metrics = metrics::ServeMetrics::default();
    // The reads of Neo4j and LanceDB: 503 with the reason at once while one is unreachable.
    let store_reads = Router::new()
        .route("/v1/search", get(api::search))
        .route("/v1/context", post(api::context))
        .route("/v1/nodes/{id}", get(api::node))
        .route("/v1/nodes/{id}/neighborhood", get(api::neighborhood))
        .route("/v1/entities", get(api::entities))
        .route("/v1/contradictions", get(api::contradictions))
        .route("/v1/questions", get(api::questions))
        .route("/v1/questions/answered", get(api::answered_questions))
        .route("/v1/plans/overdue", get(api::overdue_plans))
        .route("/v1/priorities", get(api::priorities))
        .route("/v1/timeline", get(api::timeline))
        .route("/v1/traverse", get(api::traverse))
        .route_layer(middleware::from_fn_with_state(state.clone(), stores::guard));
    // The writes checked against the graph first (a review's edge, a proposal's diff): the same
    // guard; the lists of reviews and proposals follow Kafka and answer during an outage.
    let checked = middleware::from_fn_with_state(state.clone(), stores::guard);
    let reads = Router::new()
        .merge(store_reads)
        .route("/v1/priorities/history", get(history::history))
        .route("/v1/priorities/movers", get(history::movers))
        .route(
            "/v1/reviews",
            get(reviews::reviews)
                .post(reviews::review.layer(checked.clone()))
                .delete(reviews::withdraw),
        )
        .route(
            "/v1/proposals",
            get(proposals::http::list).post(proposals::http::propose.layer(checked.clone())),
        )
        .route("/v1/proposals/{id}", get(proposals::http::get))
        .route(
            "/v1/proposals/{id}/approve",
            post(proposals::http::approve.layer(checked)),
        )
        .route("/v1/proposals/{id}/reject", post(proposals::http::reject))
        .route(
            "/v1/proposals/{id}/withdraw",
            post(proposals::http::withdraw),
        )
        .route("/v1/dead-letters", get(dead_letters::dead_letters))
        .route(
            "/v1/connectors",
            get(connectors::connectors).delete(connectors::forget),
        )
        .route("/v1/dashboard/stream", get(live::stream))
        .nest_service("/mcp", mcp::service(state.clone()))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            auth::authenticate,
        ));
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(stores::readyz))
        .route("/openapi.json", get(openapi::document))
        .route("/dashboard", get(dashboard))
        .route("/workspace", get(workspace::page))
        .route("/ui/{*file}", get(workspace::file))
        .route("/metrics", get(metrics::scrape))
        .route("/metrics/pipeline", get(metrics::pipeline))
        .route("/v1/ingest", post(webhook::ingest))
        .merge(reads)
        .fallback(extract::no_route)
        .method_not_allowed_fallback(extract::wrong_method)
        // A panicking handler answers 500 (counted by `track` around it), not a dropped line.
        .layer(middleware::from_fn_with_state(
            serve_metrics.clone(),
            panics::catch,
        ))
        .layer(middleware::from_fn_with_state(
            serve_metrics.clone(),
            metrics::track,
        ))
        .layer(axum::Extension(serve_metrics.clone()))
        .layer(DefaultBodyLimit::max(body_limit))
        // A turn, a bounded place in line, or 503 at once; the wait counts against the timeout.
        .layer(middleware::from_fn_with_state(
            admission::Gate::new(concurrency, waiting, serve_metrics),
            admission::admit,
        ))
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            timeout,
        ))
        .layer(middleware::map_response(extract::untyped_errors_as_json))
        .with_state(state)
}

/// How often a query service without the static embedding table looks for its file.
const STATIC_TABLE_LOOK_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

/// Load the static embedding table of `backfill` and embed queries with it too, if its file
/// exists (a bulk backfill distils it on first use). Returns whether it did.
async fn take_on_static_table(
    lance: &LanceSink,
    backfill: &epigraph_sinks::embed::EmbedConfig,
) -> Result<bool> {
    if !epigraph_sinks::embed::static_table::StaticTable::file(backfill).is_file() {
        return Ok(false);
    }
    let config = backfill.clone();
    let table = tokio::task::spawn_blocking(move || Embedder::load(&config)).await??;
    lance.embed_queries_also_with(Arc::new(table));
    Ok(true)
}

/// Open the stores (LanceDB with the embedder, Neo4j, the usage reporter and the webhook's
/// producer when configured) into the handlers' state; a LanceDB folder that cannot be opened
/// is an error at once (see [`open_state_waiting`]).
pub async fn open_state(config: &EpigraphConfig) -> Result<AppState> {
    open_state_with(config, None).await
}

/// [`open_state`], waiting for a LanceDB folder that cannot be opened yet (missing mount,
/// read-only, unreachable): each failed attempt is told to `waiting` with its reason, and
/// retried with backoff (1 s doubling to 30 s). A table of another schema is still an error
/// at once: waiting would not mend it.
pub async fn open_state_waiting(
    config: &EpigraphConfig,
    waiting: &(dyn Fn(String) + Send + Sync),
) -> Result<AppState> {
    open_state_with(config, Some(waiting)).await
}

/// The longest wait between two attempts to open LanceDB at start.
const LANCE_OPEN_BACKOFF_MAX: std::time::Duration = std::time::Duration::from_secs(30);

async fn open_state_with(
    config: &EpigraphConfig,
    waiting: Option<&(dyn Fn(String) + Send + Sync)>,
) -> Result<AppState> {
    let embedder = if config.lancedb.embed {
        let model = config.model.clone();
        Some(Arc::new(
            tokio::task::spawn_blocking(move || Embedder::load(&model)).await??,
        ))
    } else {
        None
    };
    // A reader: a table another version wrote is an error, never dropped.
    let mut backoff = std::time::Duration::from_secs(1);
    let lance = loop {
        match LanceSink::open_reader(&config.lancedb, embedder.clone()).await {
            Ok(lance) => break lance,
            Err(error @ epigraph_sinks::SinkError::Config(_)) => return Err(error.into()),
            Err(error) => {
                let Some(waiting) = waiting else {
                    return Err(error.into());
                };
                waiting(format!(
                    "LanceDB ({}) cannot be opened: {error}; trying again in {} s",
                    config.lancedb.dir,
                    backoff.as_secs()
                ));
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(LANCE_OPEN_BACKOFF_MAX);
            }
        }
    };
    if backoff > std::time::Duration::from_secs(1) {
        info!(dir = %config.lancedb.dir, "LanceDB opened: the query service serves");
    }
    // Rows a bulk backfill embedded with the static table keep those vectors until the
    // pipeline's filler upgraded them: wherever a table holds such rows, queries are embedded
    // by the table too. It is taken on now if its file exists, else as soon as a backfill
    // distils it (looked for every 30 s).
    if config.lancedb.embed && config.model.kind == epigraph_sinks::embed::EmbedKind::Model {
        let backfill = epigraph_sinks::embed::EmbedConfig {
            kind: epigraph_sinks::embed::EmbedKind::Static,
            ..config.model.clone()
        };
        if !take_on_static_table(&lance, &backfill).await? {
            let lance = lance.clone();
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(STATIC_TABLE_LOOK_EVERY).await;
                    match take_on_static_table(&lance, &backfill).await {
                        Ok(true) => break,
                        Ok(false) => {}
                        Err(error) => {
                            tracing::warn!(%error, "could not load the static embedding table")
                        }
                    }
                }
            });
        }
    }
    let graph = GraphReader::new(epigraph_sinks::neo4j::connect_graph(&config.neo4j)?);
    let usage = if config.serve.report_usage {
        let producer = epigraph_sources::kafka::EventProducer::new(&config.kafka)?;
        Some(UsageReporter::new(producer, config.kafka.feedback_topic()))
    } else {
        None
    };
    // Kafka down at start keeps nothing from being read: the topics are created in the
    // background and writes answer 503 with the reason until they exist.
    let topics = topics::Topics::ensure(&config.kafka).await;
    let webhook = if config.serve.ingest_tokens.is_empty() {
        None
    } else {
        let producer = epigraph_sources::kafka::EventProducer::new(&config.kafka)?;
        let tokens = config.serve.ingest_tokens.clone();
        Some(webhook::Webhook::new(
            producer,
            tokens,
            config.kafka.dead_letter_max_bytes,
        ))
    };
    // Review actions publish to the feedback topic, and list what it holds.
    let mut desk = reviews::ReviewDesk::new(
        epigraph_sources::kafka::EventProducer::new(&config.kafka)?,
        config.kafka.feedback_topic(),
    );
    desk.gate(topics.clone());
    desk.follow(config.kafka.clone());
    // Proposals are recorded on their topic, read back at start, and applied on time.
    let mut proposals = proposals::ProposalDesk::new(
        epigraph_sources::kafka::EventProducer::new(&config.kafka)?,
        config.kafka.proposals_topic(),
        config.governance.clone(),
    )?;
    proposals.gate(topics.clone());
    proposals.follow(config.kafka.clone());
    let mut serve = config.serve.clone();
    if serve.rank.walk.edges.is_empty() {
        // The walk follows the ontology's positive signed edges, weighted by their coefficient.
        let ontology = config.ontology.load().context("loading the ontology")?;
        serve.rank.walk.edges = ontology
            .edges
            .iter()
            .filter(|e| e.coefficient > 0.0)
            .map(|e| (e.name.clone(), e.coefficient))
            .collect();
    }
    if serve.pipeline_metrics.is_empty() && !config.run.metrics_listen.is_empty() {
        serve.pipeline_metrics = format!("http://{}/metrics", config.run.metrics_listen);
    }
    let state = AppState::new(lance, graph, serve, webhook, usage)
        .with_reviews(desk)
        .with_proposals(proposals.clone())
        .with_topics(topics);
    proposals.keep_time(state.clone());
    state.dead_letters.follow(config.kafka.clone());
    state.connectors.follow(config.kafka.clone());
    state.history.follow(config.kafka.clone());
    Ok(state)
}

/// Open the stores and serve until the process is stopped.
pub async fn serve(config: EpigraphConfig, listen: Option<String>) -> Result<()> {
    let listen = listen.unwrap_or_else(|| config.serve.listen.clone());
    let addr: SocketAddr = listen
        .parse()
        .with_context(|| format!("listen address {listen:?}"))?;
    auth::check_listen(&config.serve, &addr)?;
    // Read the certificate before anything else: a wrong path fails at once.
    let tls = if config.serve.tls.enabled()? {
        Some(tls::acceptor(&config.serve.tls)?)
    } else {
        None
    };
    // Listen first: until the stores are open every request is answered 503 with the reason
    // (a LanceDB folder that cannot be opened yet is waited for, see `open_state_waiting`).
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    let (gate, gated_by) =
        tokio::sync::watch::channel(Gate::Starting("the stores are being opened".to_string()));
    let live_slot: Arc<std::sync::OnceLock<live::LiveHub>> = Arc::default();
    let (failed, failure) = tokio::sync::oneshot::channel::<anyhow::Error>();
    {
        let live_slot = live_slot.clone();
        tokio::spawn(async move {
            let told = std::sync::Mutex::new(String::new());
            let waiting = |reason: String| {
                // Logged when the reason changes, not at every attempt.
                let mut last = told.lock().expect("reason lock");
                let cause = reason.split("; trying again").next().unwrap_or_default();
                if *last != cause {
                    tracing::warn!(%reason, "the query service answers 503 until LanceDB opens");
                    *last = cause.to_string();
                }
                gate.send_replace(Gate::Starting(reason));
            };
            match open_state_waiting(&config, &waiting).await {
                Ok(state) => {
                    state.stores.spawn_prober(
                        state.query.clone(),
                        std::time::Duration::from_millis(config.serve.store_probe_ms.max(100)),
                        std::time::Duration::from_millis(
                            config.serve.store_probe_timeout_ms.max(100),
                        ),
                    );
                    let live = state.live().clone();
                    live.listen(config.kafka.clone());
                    let _ = live_slot.set(live);
                    gate.send_replace(Gate::Ready(Box::new(router(state))));
                }
                Err(error) => {
                    let _ = failed.send(error);
                }
            }
        });
    }
    let scheme = if tls.is_some() { "https" } else { "http" };
    info!(%addr, scheme, "serving");
    if tls.is_none() && !addr.ip().is_loopback() {
        tracing::warn!(
            %addr,
            "serving plain HTTP beyond loopback: bearer tokens and answers travel in clear; \
             set [serve.tls] or terminate TLS in a proxy in front of this address"
        );
    }
    println!(
        "epigraph serve: listening on {scheme}://{addr}  (/v1/search?q=…, /dashboard, /openapi.json, /mcp)"
    );
    let stopped = async move {
        shutdown_signal().await;
        // Live streams never end by themselves: end them, or the shutdown waits forever.
        if let Some(live) = live_slot.get() {
            live.shut();
        }
    };
    // A store that cannot be opened for a reason waiting will not mend ends the process.
    let failed = async move {
        match failure.await {
            Ok(error) => error,
            Err(_) => std::future::pending().await,
        }
    };
    let app = gated(gated_by);
    let serving = async move {
        match tls {
            Some(acceptor) => tls::serve(listener, acceptor, app, stopped).await,
            None => Ok(axum::serve(listener, app)
                .with_graceful_shutdown(stopped)
                .await?),
        }
    };
    tokio::select! {
        served = serving => served?,
        error = failed => return Err(error),
    }
    Ok(())
}

/// What the listener serves: the query service once its stores are open, and until then a
/// `503` with the reason (and `Retry-After`) for every request, `/healthz` and `/readyz` too.
#[derive(Clone)]
enum Gate {
    /// The stores are being opened, or waited for: why.
    Starting(String),
    /// The query service.
    Ready(Box<Router>),
}

/// The router in front of the [`Gate`].
fn gated(gate: tokio::sync::watch::Receiver<Gate>) -> Router {
    Router::new().fallback(move |request: axum::extract::Request| {
        let current = gate.borrow().clone();
        async move {
            match current {
                Gate::Ready(mut router) => {
                    match tower::Service::call(&mut *router, request).await {
                        Ok(response) => response,
                        Err(never) => match never {},
                    }
                }
                Gate::Starting(reason) => ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!("the query service is starting: {reason}"),
                )
                .into_response(),
            }
        }
    })
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
