//! Review actions: a reviewer confirms or rejects a judgement the system made (a contradiction,
//! supersession, answer, block, support or same-as link), or withdraws an earlier review.
//!
//! - `POST /v1/reviews` `{"relation", "from", "to", "verdict": "confirm" | "reject", "reason"?,
//!   "by"?}` publishes the review to the feedback topic (event-sourced: who, when, why) and
//!   answers `202` with its key. The pipeline reads it at its next epoch: a rejected edge is
//!   retracted with what followed from it, a confirmed one is marked `review: "confirmed"`.
//!   A `SAME_AS` review is an identity verdict (`confirm` = same, `reject` = distinct).
//! - `DELETE /v1/reviews?relation=…&from=…&to=…` withdraws it (a tombstone on its key): the state
//!   before the review comes back.
//! - `GET /v1/reviews` lists the tenant's reviews in force, newest first.
//!
//! The list is the feedback topic read from its beginning by a background task
//! ([`ReviewDesk::follow`]), plus what this server published itself (so a page sees its own
//! action at once). Rejections hold across restarts and `epigraph rebuild`: the topic is
//! compacted by key and replayed.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use axum::Json;
use axum::extract::{Extension, State};
use axum::http::StatusCode;
use epigraph_query::QueryError;
use epigraph_query::plans::{Readings, closing_report};
use epigraph_schemas::feedback::{Feedback, IdentityVerdict, Judged, ReviewVerdict};
use epigraph_schemas::memory::EpistemicType;
use epigraph_sources::kafka::{EventProducer, KafkaConfig};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::auth::{Caller, Tenant};
use super::extract::{ApiJson, ApiQuery};
use super::{ApiError, AppState};

/// The relationship type of identity links, reviewed as identity verdicts.
const SAME_AS: &str = "SAME_AS";

/// A review as the API shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ReviewView {
    /// The feedback key (withdrawing uses the same relation and endpoints).
    pub key: String,
    /// `CONTRADICTS`, `SUPERSEDES`, `ANSWERS`, `BLOCKS`, `SUPPORTS`, `IMPLEMENTS` or `SAME_AS`.
    pub relation: String,
    /// The edge's start node id.
    pub from: String,
    /// The edge's end node id.
    pub to: String,
    /// `confirm`, `reject` or `assert`.
    pub verdict: String,
    /// Why, in the reviewer's words.
    pub reason: Option<String>,
    /// Who reviewed.
    pub by: Option<String>,
    /// When (ms since the Unix epoch), if recorded.
    pub at: Option<i64>,
}

impl ReviewView {
    /// The view of a feedback record, if it is a review or an identity verdict.
    fn of(feedback: &Feedback) -> Option<(String, ReviewView)> {
        let view = match feedback {
            Feedback::Review {
                relation,
                from,
                to,
                verdict,
                reason,
                by,
                at,
                ..
            } => ReviewView {
                key: feedback.key(),
                relation: relation.rel_type().to_string(),
                from: from.clone(),
                to: to.clone(),
                verdict: verdict.as_str().to_string(),
                reason: reason.clone(),
                by: by.clone(),
                at: *at,
            },
            Feedback::Identity { a, b, verdict, .. } => ReviewView {
                key: feedback.key(),
                relation: SAME_AS.to_string(),
                from: a.clone(),
                to: b.clone(),
                verdict: match verdict {
                    IdentityVerdict::Same => "confirm",
                    IdentityVerdict::Distinct => "reject",
                }
                .to_string(),
                reason: None,
                by: None,
                at: None,
            },
            Feedback::Amend { .. } | Feedback::Usage { .. } => return None,
        };
        Some((feedback.tenant().to_string(), view))
    }
}

/// A review to publish.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewRequest {
    /// `CONTRADICTS`, `SUPERSEDES`, `ANSWERS`, `BLOCKS`, `SUPPORTS`, `IMPLEMENTS` or `SAME_AS`.
    pub relation: String,
    /// The edge's start node id (as `/v1/contradictions`, `/v1/timeline` or
    /// `/v1/nodes/{id}/neighborhood` show it).
    pub from: String,
    /// The edge's end node id.
    pub to: String,
    /// `confirm`, `reject` or `assert` (draw the edge whether or not the rules do).
    #[schema(value_type = String)]
    pub verdict: ReviewVerdict,
    /// Why (kept with the review).
    pub reason: Option<String>,
    /// Who reviews (a name; kept with the review).
    pub by: Option<String>,
}

/// Which review to withdraw.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct WithdrawParams {
    /// The relationship type the review was about.
    pub relation: String,
    /// Its start node id.
    pub from: String,
    /// Its end node id.
    pub to: String,
    /// Tenant (development mode only).
    pub tenant: Option<String>,
}

/// The answer to a published or withdrawn review.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReviewReceipt {
    /// The feedback key.
    pub key: String,
    /// `published` or `withdrawn`.
    pub status: String,
    /// The review as published (absent for a withdrawal).
    pub review: Option<ReviewView>,
}

/// The reviews in force.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReviewsResponse {
    /// Newest first.
    pub reviews: Vec<ReviewView>,
}

/// Publishes reviews to the feedback topic and keeps the list of those in force.
#[derive(Clone)]
pub struct ReviewDesk {
    producer: Arc<EventProducer>,
    topic: String,
    /// `key → (tenant, review)`.
    in_force: Arc<RwLock<BTreeMap<String, (String, ReviewView)>>>,
    /// Amendments of memory objects in force, by key.
    amendments: Arc<RwLock<BTreeMap<String, Feedback>>>,
    /// Writes wait for the topics (503 until they exist).
    topics: super::topics::Topics,
}

impl std::fmt::Debug for ReviewDesk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReviewDesk")
            .field("topic", &self.topic)
            .finish()
    }
}

impl ReviewDesk {
    /// A desk publishing to `topic`.
    pub fn new(producer: EventProducer, topic: String) -> Self {
        ReviewDesk {
            producer: Arc::new(producer),
            topic,
            in_force: Arc::default(),
            amendments: Arc::default(),
            topics: Default::default(),
        }
    }

    /// Refuse writes (503) while `topics` are not created yet.
    pub fn gate(&mut self, topics: super::topics::Topics) {
        self.topics = topics;
    }

    /// Read the feedback topic from its beginning, and on, into the list of reviews in force,
    /// in the background.
    pub fn follow(&self, kafka: KafkaConfig) {
        let desk = self.clone();
        super::follow::follow(kafka, self.topic.clone(), "reviews", move |key, message| {
            desk.absorb(key, message.payload.as_deref())
        });
    }

    /// One feedback message: a review replaces the one in force on its key, a tombstone
    /// withdraws it; other records are not reviews.
    fn absorb(&self, key: &str, payload: Option<&[u8]>) {
        let mut in_force = self.in_force.write().expect("reviews lock");
        let mut amendments = self.amendments.write().expect("amendments lock");
        match payload.map(Feedback::parse) {
            None => {
                in_force.remove(key);
                amendments.remove(key);
            }
            // Under another record's key the pipeline dead-letters it: not in force here either.
            Some(Ok(feedback)) if !feedback.keyed_by(key) => {}
            Some(Ok(amendment @ Feedback::Amend { .. })) => {
                amendments.insert(key.to_string(), amendment);
            }
            Some(Ok(feedback)) => {
                if let Some(entry) = ReviewView::of(&feedback) {
                    in_force.insert(key.to_string(), entry);
                }
            }
            // The pipeline dead-letters it; here it is simply not a review.
            Some(Err(_)) => {}
        }
    }

    /// The tenant's reviews in force, newest first.
    pub fn list(&self, tenant: &str) -> Vec<ReviewView> {
        let in_force = self.in_force.read().expect("reviews lock");
        let mut reviews: Vec<ReviewView> = in_force
            .values()
            .filter(|(t, _)| t == tenant)
            .map(|(_, r)| r.clone())
            .collect();
        reviews.sort_by(|a, b| b.at.cmp(&a.at).then_with(|| a.key.cmp(&b.key)));
        reviews
    }

    /// The tenant's reviews of which statement closes which plan (`IMPLEMENTS` from a report
    /// to a plan), for the plans past their date: a rejected reading closes nothing.
    pub fn readings(&self, tenant: &str) -> Readings {
        let mut readings = Readings::default();
        for review in self.list(tenant) {
            if review.relation != Judged::Implements.rel_type() {
                continue;
            }
            // An asserted reading holds like a confirmed one.
            match ReviewVerdict::parse(&review.verdict) {
                Some(ReviewVerdict::Reject) => readings.reject(&review.from, &review.to),
                Some(ReviewVerdict::Confirm | ReviewVerdict::Assert) => {
                    readings.confirm(&review.from, &review.to)
                }
                None => {}
            }
        }
        readings
    }

    /// The amendment in force under `key`, if any.
    pub fn amendment(&self, key: &str) -> Option<Feedback> {
        self.amendments
            .read()
            .expect("amendments lock")
            .get(key)
            .cloned()
    }

    /// The review in force under `key`, if any.
    pub fn review(&self, key: &str) -> Option<ReviewView> {
        self.in_force
            .read()
            .expect("reviews lock")
            .get(key)
            .map(|(_, r)| r.clone())
    }

    /// Whether a review is in force under `key`.
    fn holds(&self, key: &str) -> bool {
        self.in_force
            .read()
            .expect("reviews lock")
            .contains_key(key)
    }

    /// Publish one feedback record (and take it into the list at once). A record of the same
    /// pair under its key of before session 27 ([`Feedback::legacy_key`]) is withdrawn first:
    /// one review per pair.
    pub(super) async fn publish(&self, record: &Feedback) -> Result<String, ApiError> {
        self.topics.writable()?;
        let key = record.key();
        if let Some(legacy) = record.legacy_key() {
            self.withdraw(&legacy).await?;
        }
        let payload = serde_json::to_vec(record).expect("feedback serializes");
        self.producer
            .publish_raw(&self.topic, &key, &payload)
            .await?;
        self.absorb(&key, Some(&payload));
        Ok(key)
    }

    /// Tombstone `key` (and take it out of the list at once).
    pub(super) async fn withdraw(&self, key: &str) -> Result<(), ApiError> {
        self.topics.writable()?;
        self.producer.publish_tombstone(&self.topic, key).await?;
        self.absorb(key, None);
        Ok(())
    }
}

/// What a review is about: a judgement of the epistemic layer, or an identity link.
enum Subject {
    Judgement(Judged),
    Identity,
}

fn subject(relation: &str) -> Result<Subject, ApiError> {
    if relation.eq_ignore_ascii_case(SAME_AS) {
        return Ok(Subject::Identity);
    }
    Judged::parse(relation)
        .map(Subject::Judgement)
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "unknown relation {relation:?}: reviewable are {} and SAME_AS",
                Judged::names()
            ))
        })
}

/// The tenant's reviewed plan readings ([`ReviewDesk::readings`]); none on a server without
/// reviews.
pub(super) fn readings(state: &AppState, tenant: &str) -> Readings {
    state
        .reviews
        .as_ref()
        .map(|desk| desk.readings(tenant))
        .unwrap_or_default()
}

/// Whether the plans view reads `report` as closing `plan` by its words (no edge drawn):
/// a statement typed a plan, and a later one, still standing, saying its work was done
/// ([`epigraph_query::plans::closing_report`]). Such a reading can be confirmed or rejected like
/// an `IMPLEMENTS` edge.
async fn read_as_done(
    state: &AppState,
    tenant: &str,
    report: &str,
    plan: &str,
) -> Result<bool, ApiError> {
    let cards = state
        .query()
        .graph()
        .memory_cards(tenant, &[report.to_string(), plan.to_string()])
        .await?;
    let (Some(report), Some(plan)) = (cards.get(report), cards.get(plan)) else {
        return Ok(false);
    };
    let now = epigraph_schemas::now_millis();
    Ok(plan.memory_type == EpistemicType::Plan
        && closing_report(plan, std::slice::from_ref(report), now).is_some())
}

fn desk(state: &AppState) -> Result<&ReviewDesk, ApiError> {
    state.reviews.as_ref().ok_or_else(|| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "reviews need Kafka: this server has no producer for the feedback topic",
        )
    })
}

/// Confirm or reject a judgement (published to the feedback topic; applied by the pipeline at
/// its next epoch).
#[utoipa::path(post, path = "/v1/reviews", request_body = ReviewRequest, tag = "reviews",
    params(("tenant" = Option<String>, Query, description = "Tenant (development mode only)")),
    responses((status = 202, body = ReviewReceipt), (status = 400, body = super::ErrorBody),
              (status = 404, body = super::ErrorBody), (status = 503, body = super::ErrorBody)))]
pub async fn review(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    Extension(caller): Extension<Caller>,
    ApiJson(request): ApiJson<ReviewRequest>,
) -> Result<(StatusCode, Json<ReviewReceipt>), ApiError> {
    caller.may_review()?;
    Ok((
        StatusCode::ACCEPTED,
        Json(submit(&state, &tenant, request).await?),
    ))
}

/// Publish a review for `tenant` (the HTTP endpoint and the MCP tool): checked, then written
/// to the feedback topic.
pub async fn submit(
    state: &AppState,
    tenant: &str,
    request: ReviewRequest,
) -> Result<ReviewReceipt, ApiError> {
    let desk = desk(state)?;
    let tenant = tenant.to_string();
    let record = match subject(&request.relation)? {
        Subject::Judgement(relation) => Feedback::Review {
            tenant: tenant.clone(),
            relation,
            from: request.from,
            to: request.to,
            verdict: request.verdict,
            reason: request.reason,
            by: request.by,
            at: Some(epigraph_schemas::now_millis()),
        },
        Subject::Identity => Feedback::Identity {
            tenant: tenant.clone(),
            a: request.from,
            b: request.to,
            verdict: match request.verdict {
                ReviewVerdict::Confirm | ReviewVerdict::Assert => IdentityVerdict::Same,
                ReviewVerdict::Reject => IdentityVerdict::Distinct,
            },
        },
    };
    record
        .validate()
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    // A judgement is reviewed where the graph holds it (or where a review of it is in force:
    // a rejected edge is gone, and its review can still be changed).
    // An assertion needs both memory objects, not the edge.
    if let Feedback::Review {
        from,
        to,
        verdict: ReviewVerdict::Assert,
        ..
    } = &record
    {
        let found = state
            .query()
            .graph()
            .versions(&tenant, &[from.clone(), to.clone()])
            .await?;
        if let Some(missing) = [from, to].into_iter().find(|id| !found.contains_key(*id)) {
            return Err(
                QueryError::NotFound(format!("no node {missing:?} in tenant {tenant:?}")).into(),
            );
        }
    } else if let Feedback::Review {
        relation, from, to, ..
    } = &record
        && !desk.holds(&record.key())
        && !state
            .query()
            .graph()
            .has_judgement(&tenant, *relation, from, to)
            .await?
        // A plan closed by a report's words has no edge, and its reading is reviewed as one.
        && !(*relation == Judged::Implements && read_as_done(state, &tenant, from, to).await?)
    {
        return Err(QueryError::NotFound(format!(
            "no {} edge from {from:?} to {to:?} in tenant {tenant:?}",
            relation.rel_type()
        ))
        .into());
    }
    let key = desk.publish(&record).await?;
    let review = ReviewView::of(&record).map(|(_, view)| view);
    Ok(ReviewReceipt {
        key,
        status: "published".into(),
        review,
    })
}

/// Withdraw a review: the state before it comes back at the pipeline's next epoch.
#[utoipa::path(delete, path = "/v1/reviews", tag = "reviews", params(WithdrawParams),
    responses((status = 202, body = ReviewReceipt), (status = 400, body = super::ErrorBody),
              (status = 503, body = super::ErrorBody)))]
pub async fn withdraw(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    Extension(caller): Extension<Caller>,
    ApiQuery(params): ApiQuery<WithdrawParams>,
) -> Result<(StatusCode, Json<ReviewReceipt>), ApiError> {
    caller.may_review()?;
    let desk = desk(&state)?;
    // The record the withdrawal is about (its verdict does not matter to its keys).
    let record = match subject(&params.relation)? {
        Subject::Judgement(relation) => Feedback::Review {
            tenant: tenant.clone(),
            relation,
            from: params.from,
            to: params.to,
            verdict: ReviewVerdict::Confirm,
            reason: None,
            by: None,
            at: None,
        },
        Subject::Identity => Feedback::Identity {
            tenant: tenant.clone(),
            a: params.from,
            b: params.to,
            verdict: IdentityVerdict::Same,
        },
    };
    let key = record.key();
    // A review of the pair written before ids were escaped in keys goes too.
    if let Some(legacy) = record.legacy_key() {
        desk.withdraw(&legacy).await?;
    }
    desk.withdraw(&key).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(ReviewReceipt {
            key,
            status: "withdrawn".into(),
            review: None,
        }),
    ))
}

/// The tenant's reviews in force, newest first.
#[utoipa::path(get, path = "/v1/reviews", tag = "reviews",
    params(("tenant" = Option<String>, Query, description = "Tenant (development mode only)")),
    responses((status = 200, body = ReviewsResponse), (status = 503, body = super::ErrorBody)))]
pub async fn reviews(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
) -> Result<Json<ReviewsResponse>, ApiError> {
    Ok(Json(ReviewsResponse {
        reviews: desk(&state)?.list(&tenant),
    }))
}
