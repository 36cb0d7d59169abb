//! `GET /v1/dead-letters`: what the pipeline and the connectors refused, with the reason and the
//! raw item, for the tenant asking (newest first; `stage` filters by who refused it, `limit`
//! caps the list).
//!
//! The list is the dead-letter topic read from its beginning by a background task
//! ([`DeadLetterLog::follow`]), keeping the newest [`KEEP_PER_TENANT`] letters per tenant. A
//! letter whose tenant could not be read (a payload too broken to say) is listed to no tenant:
//! it stays on the topic for an operator.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, RwLock};

use axum::Json;
use axum::extract::{Extension, State};
use epigraph_sources::kafka::{DeadLetter, KafkaConfig};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::auth::Tenant;
use super::extract::ApiQuery;
use super::{ApiError, AppState};

/// Letters kept in memory per tenant (the topic keeps them all, for its retention).
pub const KEEP_PER_TENANT: usize = 1000;

/// How many bytes of the raw item a letter shows as text.
const PREVIEW_BYTES: usize = 2000;

/// A dead letter as the API shows it.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct DeadLetterView {
    /// Why it was refused.
    pub reason: String,
    /// Who refused it: a connector (`docs`, `slack`, …), `run` (an undecodable event or
    /// feedback record) or `webhook`.
    pub stage: String,
    /// Where it came from: a file with line or byte offset, or `topic/partition@offset`.
    pub location: String,
    /// The source it came from: the location without its position (the file, mailbox,
    /// calendar object or topic).
    pub source: String,
    /// When (ms since the Unix epoch).
    pub at: i64,
    /// The raw item's size before capping, in bytes.
    pub raw_size: usize,
    /// The raw item as kept (base64, capped at `kafka.dead_letter_max_bytes`).
    pub raw_base64: String,
    /// Its first bytes as text (invalid UTF-8 replaced), for reading in a list.
    pub raw_preview: String,
}

impl DeadLetterView {
    /// The view of a letter (also `epigraph dlq show --json`).
    pub fn of(letter: &DeadLetter) -> Self {
        let raw = letter.raw();
        let shown = &raw[..raw.len().min(PREVIEW_BYTES)];
        DeadLetterView {
            reason: letter.reason.clone(),
            stage: letter.stage.clone(),
            location: letter.location.clone(),
            source: source_of(&letter.location).to_string(),
            at: letter.at,
            raw_size: letter.raw_size,
            raw_base64: letter.raw_base64.clone(),
            raw_preview: String::from_utf8_lossy(shown).into_owned(),
        }
    }
}

/// Parameters of `GET /v1/dead-letters`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DeadLetterParams {
    /// Only letters refused by this stage (`run`, `docs`, `mail`, `slack`, `ics`, `webhook`, …).
    pub stage: Option<String>,
    /// Only letters from this source, or from under it: a file, a folder, a mailbox, a topic
    /// (a prefix of `source`).
    pub source: Option<String>,
    /// Most letters (default 100, at most 1000).
    pub limit: Option<usize>,
    /// Tenant (development mode only).
    pub tenant: Option<String>,
}

/// The tenant's dead letters.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeadLettersResponse {
    /// Newest first.
    pub letters: Vec<DeadLetterView>,
    /// Letters of the tenant held (before the filter and the limit).
    pub total: usize,
    /// Letters per stage, for the tenant.
    pub by_stage: HashMap<String, usize>,
    /// Letters per source, for the tenant.
    pub by_source: BTreeMap<String, usize>,
}

/// The source a dead letter's location names: the location without its position — a line
/// (`:12`), a byte offset (`@4096 (message 3)`) or a partition and offset (`/0@17`).
///
/// ```
/// use epigraph::serve::dead_letters::source_of;
/// assert_eq!(source_of("notes/a.jsonl:12"), "notes/a.jsonl");
/// assert_eq!(source_of("mail/inbox.mbox@4096 (message 3)"), "mail/inbox.mbox");
/// assert_eq!(source_of("acme.events/0@17"), "acme.events");
/// assert_eq!(source_of("docs/plan.md"), "docs/plan.md");
/// ```
pub fn source_of(location: &str) -> &str {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let location = location.split(" (").next().unwrap_or(location);
    if let Some((head, offset)) = location.rsplit_once('@')
        && digits(offset)
    {
        return match head.rsplit_once('/') {
            Some((topic, partition)) if digits(partition) => topic,
            _ => head,
        };
    }
    match location.rsplit_once(':') {
        Some((head, line)) if digits(line) => head,
        _ => location,
    }
}

/// The newest dead letters per tenant, read from the dead-letter topic.
#[derive(Clone, Debug, Default)]
pub struct DeadLetterLog {
    by_tenant: Arc<RwLock<HashMap<String, VecDeque<DeadLetterView>>>>,
}

impl DeadLetterLog {
    /// Follow the dead-letter topic of `kafka` in the background.
    pub fn follow(&self, kafka: KafkaConfig) {
        let log = self.clone();
        let topic = kafka.dlq_topic();
        super::follow::follow(kafka, topic, "dead letters", move |_, message| {
            let letter = message
                .payload
                .as_deref()
                .and_then(|p| serde_json::from_slice::<DeadLetter>(p).ok());
            match letter {
                Some(letter) => log.absorb(&letter),
                None => tracing::warn!(at = %message.location(), "not a dead letter"),
            }
        });
    }

    fn absorb(&self, letter: &DeadLetter) {
        let Some(tenant) = &letter.tenant else {
            return;
        };
        let mut by_tenant = self.by_tenant.write().expect("dead letters lock");
        let letters = by_tenant.entry(tenant.clone()).or_default();
        letters.push_back(DeadLetterView::of(letter));
        if letters.len() > KEEP_PER_TENANT {
            letters.pop_front();
        }
    }

    /// The tenant's letters, newest first, filtered by `stage` and by `source` (a prefix), at
    /// most `limit`.
    pub fn list(
        &self,
        tenant: &str,
        stage: Option<&str>,
        source: Option<&str>,
        limit: usize,
    ) -> DeadLettersResponse {
        let by_tenant = self.by_tenant.read().expect("dead letters lock");
        let held = by_tenant.get(tenant);
        let mut by_stage = HashMap::new();
        let mut by_source = BTreeMap::new();
        for letter in held.into_iter().flatten() {
            *by_stage.entry(letter.stage.clone()).or_insert(0) += 1;
            *by_source.entry(letter.source.clone()).or_insert(0) += 1;
        }
        let source = source.map(str::trim).filter(|s| !s.is_empty());
        let mut letters: Vec<DeadLetterView> = held
            .into_iter()
            .flatten()
            .filter(|l| stage.is_none_or(|s| l.stage == s))
            .filter(|l| source.is_none_or(|s| l.source.starts_with(s)))
            .cloned()
            .collect();
        letters.sort_by_key(|l| std::cmp::Reverse(l.at));
        letters.truncate(limit);
        DeadLettersResponse {
            letters,
            total: held.map_or(0, VecDeque::len),
            by_stage,
            by_source,
        }
    }
}

/// What the pipeline and the connectors refused, with the reason and the raw item.
#[utoipa::path(get, path = "/v1/dead-letters", tag = "health", params(DeadLetterParams),
    responses((status = 200, body = DeadLettersResponse), (status = 401, body = super::ErrorBody)))]
pub async fn dead_letters(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    ApiQuery(params): ApiQuery<DeadLetterParams>,
) -> Result<Json<DeadLettersResponse>, ApiError> {
    let limit = params.limit.unwrap_or(100).clamp(1, KEEP_PER_TENANT);
    Ok(Json(state.dead_letters.list(
        &tenant,
        params.stage.as_deref(),
        params.source.as_deref(),
        limit,
    )))
}
