//! `GET /v1/connectors`: the tenant's source followers (`epigraph ingest caldav|imap|topic`) as
//! they last reported themselves on `<prefix>.connectors` — up, failing (with the error and the
//! next try), silent (not heard from for three report intervals: killed, or cut off from
//! Kafka) or stopped — for the health page.
//!
//! The list is the compacted topic read from its beginning by a background task
//! ([`ConnectorLog::follow`]), keeping the latest report per connector; a tombstone forgets one.
//!
//! `DELETE /v1/connectors?source=…&target=…`: a reviewer forgets a connector that is stopped or
//! silent (one retired for good, or a test run), by publishing its tombstone; a connector still
//! reporting is refused (`409`): it would list itself again at its next report.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use axum::Json;
use axum::extract::{Extension, State};
use axum::http::StatusCode;
use epigraph_sources::kafka::{ConnectorStatus, EventProducer, KafkaConfig};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::auth::{Caller, Tenant};
use super::extract::ApiQuery;
use super::{ApiError, AppState};

/// A connector as the health page shows it.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct ConnectorView {
    /// `up`, `failing` (the last sync failed; it retries), `silent` (no report for three
    /// report intervals), `stopped` (the command ended) or `starting`.
    pub state: String,
    /// The kind of connector: `caldav`, `imap`, `topic`.
    pub source: String,
    /// What it follows: the collection URL, `host:port/mailboxes`, the `[[sources.topic]]` name.
    pub target: String,
    /// Whether it follows (`--follow`) or read once.
    pub following: bool,
    /// When it last reported (ms since the Unix epoch).
    pub reported_at: i64,
    /// When it started (ms).
    pub started_at: i64,
    /// When a sync last succeeded (ms).
    pub last_success: Option<i64>,
    /// While failing: the wait before its next try (ms).
    pub retry_in_ms: u64,
    /// Syncs that succeeded, and that failed, since it started.
    pub syncs_ok: u64,
    /// Syncs that failed since it started.
    pub syncs_failed: u64,
    /// Events published since it started.
    pub published: u64,
    /// Tombstones published since it started.
    pub tombstoned: u64,
    /// Items dead-lettered since it started (listed under `/v1/dead-letters`).
    pub dead_letters: u64,
    /// The last error, or why it stopped.
    pub last_error: Option<String>,
}

impl ConnectorView {
    /// The view of `status` as of `now` (ms).
    pub fn of(status: &ConnectorStatus, now: i64) -> Self {
        ConnectorView {
            state: status.state(now).to_string(),
            source: status.source.clone(),
            target: status.target.clone(),
            following: status.following,
            reported_at: status.at,
            started_at: status.started_at,
            last_success: status.last_success,
            retry_in_ms: status.retry_in_ms,
            syncs_ok: status.syncs_ok,
            syncs_failed: status.syncs_failed,
            published: status.published,
            tombstoned: status.tombstoned,
            dead_letters: status.dead_letters,
            last_error: status.last_error.clone(),
        }
    }
}

/// Parameters of `GET /v1/connectors`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ConnectorParams {
    /// Tenant (development mode only).
    pub tenant: Option<String>,
}

/// The tenant's connectors.
#[derive(Debug, Serialize, ToSchema)]
pub struct ConnectorsResponse {
    /// Failing and silent ones first, then by kind and target.
    pub connectors: Vec<ConnectorView>,
}

/// The latest report of every connector, per tenant, read from `<prefix>.connectors`.
#[derive(Clone, Debug, Default)]
pub struct ConnectorLog {
    by_key: Arc<RwLock<HashMap<String, ConnectorStatus>>>,
    /// Where forgetting publishes its tombstones (set by [`Self::follow`]).
    tombstones: Arc<OnceLock<(EventProducer, String)>>,
}

impl ConnectorLog {
    /// Follow the connectors topic of `kafka` in the background.
    pub fn follow(&self, kafka: KafkaConfig) {
        let log = self.clone();
        let topic = kafka.connectors_topic();
        match EventProducer::new(&kafka) {
            Ok(producer) => {
                let _ = self.tombstones.set((producer, topic.clone()));
            }
            Err(error) => tracing::warn!(%error, "no producer: connectors cannot be forgotten"),
        }
        super::follow::follow(
            kafka,
            topic,
            "connector reports",
            move |key, message| match message.payload.as_deref() {
                None => log.forget(key),
                Some(payload) => match serde_json::from_slice::<ConnectorStatus>(payload) {
                    Ok(status) => log.absorb(key, status),
                    Err(error) => {
                        tracing::warn!(at = %message.location(), %error, "not a connector report")
                    }
                },
            },
        );
    }

    /// Keep `status` as the latest report under `key`. Reports of one key arrive in order; an
    /// older one (from a duplicate send) never replaces a newer, and a run that said it stopped
    /// stays stopped (only a later run, started after, lists the connector again).
    ///
    /// ```
    /// use epigraph::serve::connectors::ConnectorLog;
    /// use epigraph_sources::kafka::ConnectorStatus;
    /// let log = ConnectorLog::default();
    /// let mut up = ConnectorStatus::starting("topic", "crm", "acme", false, 0);
    /// up.up = true;
    /// up.at = 10;
    /// let mut stopped = up.clone();
    /// stopped.stopped = true;
    /// log.absorb(&up.key(), stopped);
    /// // A report of the same run queued after its last one, in the same millisecond.
    /// log.absorb(&up.key(), up.clone());
    /// assert_eq!(log.list("acme", 10)[0].state, "stopped");
    /// // The next run of the same connector.
    /// let mut again = up.clone();
    /// again.started_at = 20;
    /// again.at = 20;
    /// log.absorb(&again.key(), again);
    /// assert_eq!(log.list("acme", 20)[0].state, "up");
    /// ```
    pub fn absorb(&self, key: &str, status: ConnectorStatus) {
        let mut by_key = self.by_key.write().expect("connectors lock");
        let newer = |held: &ConnectorStatus| {
            held.at <= status.at
                && !(held.stopped && !status.stopped && held.started_at == status.started_at)
        };
        if by_key.get(key).is_none_or(newer) {
            by_key.insert(key.to_string(), status);
        }
    }

    fn forget(&self, key: &str) {
        self.by_key.write().expect("connectors lock").remove(key);
    }

    /// The latest report under `key` (`<tenant>/<source>/<target>`).
    pub fn get(&self, key: &str) -> Option<ConnectorStatus> {
        self.by_key
            .read()
            .expect("connectors lock")
            .get(key)
            .cloned()
    }

    /// Forget the connector under `key` for good: its tombstone on the connectors topic (so
    /// every reader of the topic, and this one after a restart, forgets it), and at once here.
    async fn publish_forget(&self, key: &str) -> Result<(), ApiError> {
        let Some((producer, topic)) = self.tombstones.get() else {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "this server does not follow the connectors topic",
            ));
        };
        producer
            .publish_tombstone(topic, key)
            .await
            .map_err(|error| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, error.to_string()))?;
        self.forget(key);
        Ok(())
    }

    /// The tenant's connectors as of `now` (ms): failing and silent first.
    ///
    /// ```
    /// use epigraph::serve::connectors::ConnectorLog;
    /// use epigraph_sources::kafka::ConnectorStatus;
    /// let log = ConnectorLog::default();
    /// let mut up = ConnectorStatus::starting("imap", "mail:993/INBOX", "acme", true, 0);
    /// up.up = true;
    /// let mut failing = ConnectorStatus::starting("caldav", "http://dav/cal/", "acme", true, 0);
    /// failing.syncs_failed = 1;
    /// failing.last_error = Some("connection refused".into());
    /// let other = ConnectorStatus::starting("topic", "crm", "globex", true, 0);
    /// for status in [up, failing, other] {
    ///     log.absorb(&status.key(), status.clone());
    /// }
    /// let listed = log.list("acme", 1_000);
    /// let states: Vec<&str> = listed.iter().map(|c| c.state.as_str()).collect();
    /// assert_eq!(states, ["failing", "up"]);
    /// ```
    pub fn list(&self, tenant: &str, now: i64) -> Vec<ConnectorView> {
        let by_key = self.by_key.read().expect("connectors lock");
        let mut views: Vec<ConnectorView> = by_key
            .values()
            .filter(|status| status.tenant == tenant)
            .map(|status| ConnectorView::of(status, now))
            .collect();
        let rank = |state: &str| match state {
            "failing" => 0,
            "silent" => 1,
            "starting" => 2,
            "up" => 3,
            _ => 4,
        };
        views.sort_by(|a, b| {
            (rank(&a.state), &a.source, &a.target).cmp(&(rank(&b.state), &b.source, &b.target))
        });
        views
    }
}

/// The tenant's source followers as they last reported themselves.
#[utoipa::path(get, path = "/v1/connectors", tag = "health", params(ConnectorParams),
    responses((status = 200, body = ConnectorsResponse), (status = 401, body = super::ErrorBody)))]
pub async fn connectors(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    ApiQuery(_params): ApiQuery<ConnectorParams>,
) -> Result<Json<ConnectorsResponse>, ApiError> {
    let now = epigraph_schemas::now_millis();
    Ok(Json(ConnectorsResponse {
        connectors: state.connectors.list(&tenant, now),
    }))
}

/// Parameters of `DELETE /v1/connectors`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ForgetParams {
    /// Tenant (development mode only).
    pub tenant: Option<String>,
    /// The connector's kind, as listed: `caldav`, `imap`, `topic`.
    pub source: String,
    /// What it follows, as listed.
    pub target: String,
}

/// Forget a stopped or silent connector (reviewers): its report is removed from the connectors
/// topic by a tombstone, and the answer is the report as it was. A connector still reporting
/// (`up`, `failing`, `starting`) is `409`: stop its command first.
#[utoipa::path(delete, path = "/v1/connectors", tag = "health", params(ForgetParams),
    responses((status = 200, body = ConnectorView), (status = 403, body = super::ErrorBody),
        (status = 404, body = super::ErrorBody), (status = 409, body = super::ErrorBody)))]
pub async fn forget(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    Extension(caller): Extension<Caller>,
    ApiQuery(params): ApiQuery<ForgetParams>,
) -> Result<Json<ConnectorView>, ApiError> {
    caller.may_review()?;
    let key = format!("{tenant}/{}/{}", params.source, params.target);
    let Some(status) = state.connectors.get(&key) else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!(
                "no connector {} {:?} in this tenant",
                params.source, params.target
            ),
        ));
    };
    let view = ConnectorView::of(&status, epigraph_schemas::now_millis());
    if !matches!(view.state.as_str(), "stopped" | "silent") {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "connector {} {:?} is {}: only a stopped or silent connector can be forgotten \
                 (it would list itself again at its next report); stop its command first",
                params.source, params.target, view.state
            ),
        ));
    }
    state.connectors.publish_forget(&key).await?;
    Ok(Json(view))
}
