//! K's history: `GET /v1/priorities/history?node=…` (a node's samples of K and its terms, oldest
//! first) and `GET /v1/priorities/movers?since=…` (what rose and fell most since an instant).
//!
//! `epigraph run` publishes a [`PrioritySample`] on `<prefix>.priorities` whenever an epoch
//! changed a memory node's K (kept 30 days). The query service reads the topic from its
//! beginning in the background ([`PriorityHistory::follow`]) and keeps the newest
//! [`KEEP_PER_NODE`] samples per node.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, RwLock};

use axum::Json;
use axum::extract::{Extension, State};
use epigraph_query::graph::MemoryCard;
use epigraph_query::rank::parse_instant;
use epigraph_query::{KThen, QueryError};
use epigraph_schemas::changes::PrioritySample;
use epigraph_sources::kafka::KafkaConfig;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::auth::Tenant;
use super::extract::ApiQuery;
use super::{ApiError, AppState};

/// Samples kept per node.
pub const KEEP_PER_NODE: usize = 256;

/// One sample of K, as the API shows it.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct KSample {
    /// When (ms since the Unix epoch).
    pub at: i64,
    /// K* in [0, 1].
    pub k: f64,
    /// The terms of Eq. 1: `s`, `h`, `u`, `e`, `g`, `c`, `decay`, and `unclamped` (K* before
    /// the clamps) in samples recorded since session 56.
    #[schema(value_type = Object)]
    pub terms: HashMap<&'static str, f64>,
}

impl KSample {
    fn of(sample: &PrioritySample) -> Self {
        let mut terms = HashMap::from([
            ("s", sample.s),
            ("h", sample.h),
            ("u", sample.u),
            ("e", sample.e),
            ("g", sample.g),
            ("c", sample.c),
            ("decay", sample.decay),
        ]);
        if let Some(unclamped) = sample.unclamped {
            terms.insert("unclamped", unclamped);
        }
        KSample {
            at: sample.at_ms,
            k: sample.k,
            terms,
        }
    }
}

/// Parameters of `GET /v1/priorities/history`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct HistoryParams {
    /// The memory node.
    pub node: String,
    /// Tenant (development mode only).
    pub tenant: Option<String>,
}

/// A node's history of K.
#[derive(Debug, Serialize, ToSchema)]
pub struct HistoryResponse {
    /// The node.
    pub node: String,
    /// Oldest first.
    pub samples: Vec<KSample>,
}

/// Parameters of `GET /v1/priorities/movers`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct MoversParams {
    /// Since when (YYYY-MM-DD, RFC 3339 or ms since the epoch; default: a day ago).
    pub since: Option<String>,
    /// Most risers and most fallers (default 10, at most 100).
    pub limit: Option<usize>,
    /// Tenant (development mode only).
    pub tenant: Option<String>,
}

/// A node whose K moved.
#[derive(Debug, Serialize, ToSchema)]
pub struct Mover {
    /// The node.
    pub node: String,
    /// K at `since` (the last sample before it; 0 for a node that is newer).
    pub k_then: f64,
    /// K now (the last sample).
    pub k_now: f64,
    /// `k_now − k_then`.
    pub delta: f64,
    /// The memory object, when the graph still holds it.
    pub card: Option<MemoryCard>,
}

/// What rose and fell most.
#[derive(Debug, Serialize, ToSchema)]
pub struct MoversResponse {
    /// The instant compared with (ms since the Unix epoch).
    pub since: i64,
    /// Largest rise first.
    pub risers: Vec<Mover>,
    /// Largest fall first.
    pub fallers: Vec<Mover>,
}

type Samples = HashMap<(String, String), VecDeque<PrioritySample>>;

/// The newest samples of K per node, read from the priorities topic.
#[derive(Clone, Debug, Default)]
pub struct PriorityHistory {
    samples: Arc<RwLock<Samples>>,
}

impl PriorityHistory {
    /// Follow the priorities topic of `kafka` in the background.
    pub fn follow(&self, kafka: KafkaConfig) {
        let history = self.clone();
        let topic = kafka.priorities_topic();
        super::follow::follow(kafka, topic, "priority samples", move |_, message| {
            let sample = message
                .payload
                .as_deref()
                .and_then(|p| serde_json::from_slice::<PrioritySample>(p).ok());
            match sample {
                Some(sample) => history.absorb(sample),
                None => tracing::warn!(at = %message.location(), "not a priority sample"),
            }
        });
    }

    fn absorb(&self, sample: PrioritySample) {
        let mut samples = self.samples.write().expect("history lock");
        let node = samples
            .entry((sample.tenant.clone(), sample.node.clone()))
            .or_default();
        // A restart replays the topic: a sample already held is not held twice.
        if node
            .iter()
            .any(|s| s.at_ms == sample.at_ms && s.k == sample.k)
        {
            return;
        }
        node.push_back(sample);
        node.make_contiguous().sort_by_key(|s| s.at_ms);
        if node.len() > KEEP_PER_NODE {
            node.pop_front();
        }
    }

    /// A node's samples, oldest first.
    pub fn of(&self, tenant: &str, node: &str) -> Vec<KSample> {
        let samples = self.samples.read().expect("history lock");
        samples
            .get(&(tenant.to_string(), node.to_string()))
            .map(|s| s.iter().map(KSample::of).collect())
            .unwrap_or_default()
    }

    /// `(node, k then, k now)` of the tenant's nodes whose K moved since `since`.
    fn moved(&self, tenant: &str, since: i64) -> Vec<(String, f64, f64)> {
        let samples = self.samples.read().expect("history lock");
        samples
            .iter()
            .filter(|((t, _), _)| t == tenant)
            .filter_map(|((_, node), s)| {
                let now = s.back()?;
                let then = s
                    .iter()
                    .rev()
                    .find(|x| x.at_ms <= since)
                    .map_or(0.0, |x| x.k);
                (now.at_ms > since && now.k != then).then(|| (node.clone(), then, now.k))
            })
            .collect()
    }
}

impl epigraph_query::PriorityHistoryRead for PriorityHistory {
    fn k_at(&self, tenant: &str, node: &str, at: i64) -> Option<KThen> {
        let samples = self.samples.read().expect("history lock");
        let node = samples.get(&(tenant.to_string(), node.to_string()))?;
        node.iter().rev().find(|s| s.at_ms <= at).map(|s| KThen {
            k: s.k,
            unclamped: s.unclamped,
        })
    }
}

/// A node's history of K and its terms, oldest first.
#[utoipa::path(get, path = "/v1/priorities/history", tag = "graph", params(HistoryParams),
    responses((status = 200, body = HistoryResponse)))]
pub async fn history(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    ApiQuery(params): ApiQuery<HistoryParams>,
) -> Result<Json<HistoryResponse>, ApiError> {
    let samples = state.history.of(&tenant, &params.node);
    Ok(Json(HistoryResponse {
        node: params.node,
        samples,
    }))
}

/// What rose and fell most in K since an instant.
#[utoipa::path(get, path = "/v1/priorities/movers", tag = "graph", params(MoversParams),
    responses((status = 200, body = MoversResponse), (status = 400, body = super::ErrorBody)))]
pub async fn movers(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    ApiQuery(params): ApiQuery<MoversParams>,
) -> Result<Json<MoversResponse>, ApiError> {
    let since = match params.since.as_deref().filter(|s| !s.trim().is_empty()) {
        Some(s) => parse_instant(s).map_err(QueryError::from)?,
        None => epigraph_schemas::now_millis() - 86_400_000,
    };
    let limit = params.limit.unwrap_or(10).clamp(1, 100);
    let mut moved = state.history.moved(&tenant, since);
    moved.sort_by(|a, b| (b.2 - b.1).total_cmp(&(a.2 - a.1)).then(a.0.cmp(&b.0)));
    let risers: Vec<_> = moved
        .iter()
        .filter(|m| m.2 > m.1)
        .take(limit)
        .cloned()
        .collect();
    let fallers: Vec<_> = moved
        .iter()
        .rev()
        .filter(|m| m.2 < m.1)
        .take(limit)
        .cloned()
        .collect();
    let ids: Vec<String> = risers.iter().chain(&fallers).map(|m| m.0.clone()).collect();
    let mut cards = state.query().graph().memory_cards(&tenant, &ids).await?;
    let mut mover = |(node, k_then, k_now): (String, f64, f64)| Mover {
        card: cards.remove(&node),
        node,
        k_then,
        k_now,
        delta: k_now - k_then,
    };
    let risers = risers.into_iter().map(&mut mover).collect();
    let fallers = fallers.into_iter().map(&mut mover).collect();
    Ok(Json(MoversResponse {
        since,
        risers,
        fallers,
    }))
}
