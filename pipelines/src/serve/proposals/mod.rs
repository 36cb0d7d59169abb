//! Governed writes: agents and people propose changes to memory, the server decides.
//!
//! A proposal ([`epigraph_schemas::proposals`]) is a note or decision record to remember, an
//! edit of a memory object, or a verdict on a judged edge. The server checks it, computes the
//! diff against the graph ([`diff`]), records who proposed it, why and what they read, and
//! applies it when its review window ([`GovernanceConfig`]) says: at once, after a delay unless
//! rejected, or when a reviewer approves. Applying re-reads every `before` and every version the
//! proposer read: if anything moved the proposal is `conflicted` and nothing of it is applied.
//! An applied proposal publishes what the pipeline reads like any other input — a note on the
//! document topic, an amendment or review on the feedback topic — so the written memory gets
//! K, can be superseded and contradicted, and `epigraph rebuild` replays it.
//!
//! Every step is a record on `<prefix>.proposals` ([`ProposalDesk::follow`] reads the topic
//! back at start): the audit trail of each change, from proposal to graph.

mod diff;
pub mod http;

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::http::StatusCode;
use epigraph_query::QueryError;
use epigraph_schemas::feedback::{Feedback, IdentityVerdict, ReviewVerdict};
use epigraph_schemas::proposals::{
    Change, Proposal, ProposalRecord, ProposalState, Proposer, ProposerKind, ReadRef, Step, Window,
    note_source_id, proposal_id,
};
use epigraph_schemas::{Party, SourceEvent, SourceKind, now_millis};
use epigraph_sources::kafka::{EventProducer, KafkaConfig};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

pub use crate::governance::{GovernanceConfig, TenantWindows, WindowError};

use super::{ApiError, AppState};

/// A proposal as the API shows it: the proposal, where it is, and every step so far.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ProposalView {
    /// Its id.
    pub id: String,
    /// `proposed`, `approved`, `rejected`, `withdrawn`, `applied` or `conflicted`.
    pub state: String,
    /// The proposal: change, proposer, why, what it read, the diff, the window.
    #[schema(value_type = Object)]
    pub proposal: Proposal,
    /// Every step, oldest first (the audit trail).
    #[schema(value_type = Vec<Object>)]
    pub history: Vec<ProposalRecord>,
}

/// One proposal in the desk's book.
#[derive(Clone, Debug)]
struct Entry {
    tenant: String,
    state: ProposalState,
    proposal: Proposal,
    history: Vec<ProposalRecord>,
}

impl Entry {
    fn view(&self) -> ProposalView {
        ProposalView {
            id: self.history[0].id.clone(),
            state: self.state.as_str().into(),
            proposal: self.proposal.clone(),
            history: self.history.clone(),
        }
    }

    fn proposed_at(&self) -> i64 {
        self.history[0].at
    }
}

/// What a proposer sends.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProposalRequest {
    /// The change: `{"kind": "remember", "memory_type", "text", "title"?, "about"?, "links"?}`,
    /// `{"kind": "edit", "node", "memory_type"?, "text"?, "valid_from"?, "valid_until"?}` or
    /// `{"kind": "judgement", "relation", "from", "to", "verdict": "confirm" | "reject" |
    /// "assert"}`.
    #[schema(value_type = Object)]
    pub change: Change,
    /// Why, in the proposer's words.
    pub why: Option<String>,
    /// The ids of the memory objects the proposer read (read provenance), optionally with the
    /// version it saw (`{"id", "version"}`).
    #[serde(default)]
    #[schema(value_type = Vec<Object>)]
    pub read: Vec<ReadItem>,
    /// The agent's name.
    pub agent: Option<String>,
    /// The model behind the agent.
    pub model: Option<String>,
    /// What the model extraction behind the proposal cost (tokens, latency, price), as the
    /// proposer reports it: written on the proposal as is.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub extraction: Option<epigraph_schemas::proposals::ExtractionCost>,
}

/// A memory object the proposer read: its id, or its id and the version it saw.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum ReadItem {
    /// Just the id: the server records the version current when the proposal is made.
    Id(String),
    /// The id and the version the proposer saw.
    Versioned(ReadRef),
}

/// A reviewer's or proposer's decision on a proposal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Apply it (now, whatever its window).
    Approve,
    /// Never apply it.
    Reject,
    /// Take it back (its proposer, or a reviewer).
    Withdraw,
}

/// Publishes proposal steps, keeps the book of proposals, and applies them.
#[derive(Clone)]
pub struct ProposalDesk {
    producer: Arc<EventProducer>,
    topic: String,
    governance: Arc<GovernanceConfig>,
    /// `<tenant>/<id>` → entry.
    book: Arc<RwLock<BTreeMap<String, Entry>>>,
    /// One application at a time: the check of the `before`s and the publication are one step.
    applying: Arc<tokio::sync::Mutex<()>>,
    /// Writes wait for the topics (503 until they exist).
    topics: crate::serve::topics::Topics,
}

impl std::fmt::Debug for ProposalDesk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProposalDesk")
            .field("topic", &self.topic)
            .finish()
    }
}

/// The most proposals a list answers.
const MAX_LIST: usize = 500;

impl ProposalDesk {
    /// A desk publishing to `topic` (`<prefix>.proposals`) under `governance`.
    pub fn new(
        producer: EventProducer,
        topic: String,
        governance: GovernanceConfig,
    ) -> Result<Self, WindowError> {
        governance.check()?;
        Ok(ProposalDesk {
            producer: Arc::new(producer),
            topic,
            governance: Arc::new(governance),
            book: Arc::default(),
            applying: Arc::default(),
            topics: Default::default(),
        })
    }

    /// Refuse writes (503) while `topics` are not created yet.
    pub fn gate(&mut self, topics: crate::serve::topics::Topics) {
        self.topics = topics;
    }

    /// Read the proposals topic from its beginning, and on, into the book, in the background.
    pub fn follow(&self, kafka: KafkaConfig) {
        let desk = self.clone();
        super::follow::follow(kafka, self.topic.clone(), "proposals", move |_, message| {
            if let Some(Ok(record)) = message.payload.as_deref().map(ProposalRecord::parse) {
                desk.absorb(record);
            }
        });
    }

    /// Apply, every `governance.tick_ms`, the proposals whose delay has passed, and the approved
    /// and immediate ones not applied yet (a server stopped, or a store down, between the two),
    /// in the background.
    pub fn keep_time(&self, state: AppState) {
        let desk = self.clone();
        let every = Duration::from_millis(self.governance.tick_ms.max(50));
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let now = now_millis();
                let due: Vec<(String, String)> = {
                    let book = desk.book.read().expect("proposals lock");
                    book.values()
                        .filter(|e| match e.state {
                            ProposalState::Approved => true,
                            // An immediate one is here only if applying it at once failed
                            // (a store down then): it is tried again.
                            ProposalState::Proposed => match e.proposal.window {
                                Window::Immediate => true,
                                Window::Delay { .. } => {
                                    e.proposal.due_at.is_some_and(|due| due <= now)
                                }
                                Window::Approval => false,
                            },
                            _ => false,
                        })
                        .map(|e| (e.tenant.clone(), e.history[0].id.clone()))
                        .collect()
                };
                for (tenant, id) in due {
                    if let Err(error) = desk.apply(&state, &tenant, &id).await {
                        tracing::warn!(%tenant, %id, error = %error.message(), "applying a proposal");
                    }
                }
            }
        });
    }

    /// Take one record into the book: a new proposal, or a step that follows from its state
    /// (anything else — a replay of a step already taken — is ignored, so this is idempotent).
    fn absorb(&self, record: ProposalRecord) {
        let key = record.key();
        let mut book = self.book.write().expect("proposals lock");
        match &record.step {
            Step::Proposed { proposal } => {
                book.entry(key).or_insert_with(|| Entry {
                    tenant: record.tenant.clone(),
                    state: ProposalState::Proposed,
                    proposal: (**proposal).clone(),
                    history: vec![record.clone()],
                });
            }
            step => {
                if let Some(entry) = book.get_mut(&key)
                    && let Ok(next) = entry.state.after(step)
                {
                    entry.state = next;
                    entry.history.push(record);
                }
            }
        }
    }

    async fn record(&self, tenant: &str, id: &str, by: &str, step: Step) -> Result<(), ApiError> {
        let record = ProposalRecord {
            tenant: tenant.into(),
            id: id.into(),
            at: now_millis(),
            by: by.into(),
            step,
        };
        self.topics.writable()?;
        let payload = serde_json::to_vec(&record).expect("a proposal record serializes");
        self.producer
            .publish_raw(&self.topic, &record.key(), &payload)
            .await?;
        self.absorb(record);
        Ok(())
    }

    /// One proposal of `tenant`.
    pub fn get(&self, tenant: &str, id: &str) -> Option<ProposalView> {
        self.book
            .read()
            .expect("proposals lock")
            .get(&format!("{tenant}/{id}"))
            .map(Entry::view)
    }

    /// The tenant's proposals, newest first, optionally in one state only.
    pub fn list(
        &self,
        tenant: &str,
        state: Option<ProposalState>,
        limit: usize,
    ) -> Vec<ProposalView> {
        let book = self.book.read().expect("proposals lock");
        let mut entries: Vec<&Entry> = book
            .values()
            .filter(|e| e.tenant == tenant && state.is_none_or(|s| e.state == s))
            .collect();
        entries.sort_by_key(|e| std::cmp::Reverse(e.proposed_at()));
        entries
            .into_iter()
            .take(limit.clamp(1, MAX_LIST))
            .map(Entry::view)
            .collect()
    }

    /// Propose a change for `tenant` as `identity` (a token's name) of `kind`: checked, diffed
    /// against the graph, recorded, and applied at once if its window is immediate.
    pub async fn propose(
        &self,
        state: &AppState,
        tenant: &str,
        identity: &str,
        kind: ProposerKind,
        request: ProposalRequest,
    ) -> Result<ProposalView, ApiError> {
        let max = self.governance.max_text_bytes;
        for (what, text) in [
            ("why", &request.why),
            ("agent", &request.agent),
            ("model", &request.model),
        ] {
            if text
                .as_ref()
                .is_some_and(|t| t.len() > epigraph_schemas::feedback::MAX_REVIEW_TEXT)
            {
                return Err(ApiError::bad_request(format!("{what} is too long")));
            }
        }
        if request.read.len() > 200 {
            return Err(ApiError::bad_request(
                "read lists at most 200 memory objects",
            ));
        }
        let mut change = request.change;
        let (diff, touched) = diff::diff(state, tenant, &mut change, max).await?;
        // Read provenance: what the proposer says it read, and what the change touches.
        let mut read: BTreeMap<String, Option<String>> = BTreeMap::new();
        for item in request.read {
            match item {
                ReadItem::Id(id) => read.entry(id).or_default(),
                ReadItem::Versioned(r) => read.entry(r.id).or_insert(r.version),
            };
        }
        for id in touched {
            read.entry(id).or_default();
        }
        let ids: Vec<String> = read.keys().cloned().collect();
        let versions = state.query().graph().versions(tenant, &ids).await?;
        let read: Vec<ReadRef> = read
            .into_iter()
            .map(|(id, given)| ReadRef {
                version: given.or_else(|| versions.get(&id).cloned()),
                id,
            })
            .collect();
        let window = self
            .governance
            .window(tenant, kind)
            .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
        let at = now_millis();
        let due_at = match window {
            Window::Delay { seconds } => Some(at + (seconds as i64).saturating_mul(1000)),
            _ => None,
        };
        let change_json = serde_json::to_string(&change).expect("a change serializes");
        let id = proposal_id(tenant, identity, at, &change_json);
        let proposal = Proposal {
            change,
            proposer: Proposer {
                kind,
                identity: identity.into(),
                agent: request.agent,
                model: request.model,
            },
            why: request.why,
            read,
            diff,
            window,
            due_at,
            extraction: request.extraction,
        };
        self.record(
            tenant,
            &id,
            identity,
            Step::Proposed {
                proposal: Box::new(proposal),
            },
        )
        .await?;
        if window == Window::Immediate {
            self.apply(state, tenant, &id).await?;
        }
        self.get(tenant, &id)
            .ok_or_else(|| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "proposal lost"))
    }

    /// Approve, reject or withdraw a proposal of `tenant` as `caller`: approving applies it.
    /// Only `reviewer` callers approve or reject; an agent (a caller over MCP) never approves
    /// or rejects a proposal made with its own token. A proposer withdraws its
    /// own, a reviewer any.
    pub async fn decide(
        &self,
        state: &AppState,
        tenant: &str,
        id: &str,
        caller: &super::auth::Caller,
        decision: Decision,
        reason: Option<String>,
    ) -> Result<ProposalView, ApiError> {
        let Some(entry) = self.get(tenant, id) else {
            return Err(QueryError::NotFound(format!("no proposal {id:?}")).into());
        };
        if reason
            .as_ref()
            .is_some_and(|r| r.len() > epigraph_schemas::feedback::MAX_REVIEW_TEXT)
        {
            return Err(ApiError::bad_request("reason is too long"));
        }
        let own = entry.proposal.proposer.identity == caller.name;
        let step = match decision {
            Decision::Approve | Decision::Reject => {
                caller.may_review()?;
                if own && caller.over_mcp {
                    return Err(ApiError::new(
                        StatusCode::FORBIDDEN,
                        "an agent does not decide a proposal made with its own token: a person does",
                    ));
                }
                if decision == Decision::Approve {
                    Step::Approved { reason }
                } else {
                    Step::Rejected { reason }
                }
            }
            Decision::Withdraw => {
                if !own {
                    caller.may_review()?;
                }
                Step::Withdrawn { reason }
            }
        };
        let current = ProposalState::parse(&entry.state).unwrap_or(ProposalState::Proposed);
        current
            .after(&step)
            .map_err(|e| ApiError::new(StatusCode::CONFLICT, e.to_string()))?;
        self.record(tenant, id, &caller.name, step).await?;
        if decision == Decision::Approve {
            self.apply(state, tenant, id).await?;
        }
        self.get(tenant, id)
            .ok_or_else(|| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "proposal lost"))
    }

    /// Apply one open proposal: compare every `before` and every version read with the state
    /// now; if anything moved record `conflicted` with what, else publish its effects and record
    /// `applied`. All or nothing.
    async fn apply(&self, state: &AppState, tenant: &str, id: &str) -> Result<(), ApiError> {
        let _one_at_a_time = self.applying.lock().await;
        let Some(entry) = self
            .book
            .read()
            .expect("proposals lock")
            .get(&format!("{tenant}/{id}"))
            .cloned()
        else {
            return Ok(());
        };
        if entry.state.is_final() {
            return Ok(());
        }
        let proposal = &entry.proposal;
        let mut changed = diff::moved(state, tenant, &proposal.change, &proposal.diff).await?;
        let ids: Vec<String> = proposal.read.iter().map(|r| r.id.clone()).collect();
        let versions = state.query().graph().versions(tenant, &ids).await?;
        for read in &proposal.read {
            let now = versions.get(&read.id);
            if now != read.version.as_ref() {
                changed.insert(
                    format!("version of {}", read.id),
                    [serde_json::json!(read.version), serde_json::json!(now)],
                );
            }
        }
        if !changed.is_empty() {
            return self
                .record(tenant, id, "server", Step::Conflicted { changed })
                .await;
        }
        let effects = self.publish_effects(state, tenant, id, proposal).await?;
        self.record(tenant, id, "server", Step::Applied { effects })
            .await
    }

    /// Publish what an applied proposal changes; the keys of what was published.
    async fn publish_effects(
        &self,
        state: &AppState,
        tenant: &str,
        id: &str,
        proposal: &Proposal,
    ) -> Result<Vec<String>, ApiError> {
        let proposer = format!(
            "{}:{}",
            proposal.proposer.kind.as_str(),
            proposal
                .proposer
                .agent
                .as_deref()
                .unwrap_or(&proposal.proposer.identity)
        );
        let reviews = state.reviews.as_ref().ok_or_else(|| {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "proposals need Kafka: this server has no producer for the feedback topic",
            )
        })?;
        let now = now_millis();
        match &proposal.change {
            Change::Remember {
                memory_type,
                title,
                text,
                about,
                links,
            } => {
                let mut note = SourceEvent::upsert(
                    tenant,
                    SourceKind::Document,
                    &note_source_id(id),
                    title.clone(),
                    text.clone(),
                    now,
                );
                note.occurred_at = Some(now);
                note.authors = vec![Party {
                    name: Some(proposer.clone()),
                    address: None,
                }];
                for (k, v) in [
                    ("via", "proposal".to_string()),
                    ("proposal", id.to_string()),
                    ("proposer", proposer.clone()),
                    ("memory_type", memory_type.clone()),
                ] {
                    note.extras.insert(k.into(), v);
                }
                if !links.is_empty() {
                    note.extras.insert(
                        "links".into(),
                        serde_json::to_string(links).expect("links serialize"),
                    );
                }
                if !about.is_empty() {
                    note.extras.insert("about".into(), about.join("; "));
                }
                note.reversion();
                let key = note.key();
                self.producer.publish([note], |_| {}).await?;
                Ok(vec![key])
            }
            Change::Edit {
                node,
                memory_type,
                text,
                valid_from,
                valid_until,
            } => {
                // One amendment per memory object: an edit adds its fields to the one in force.
                let key = epigraph_schemas::feedback::amend_key(tenant, node);
                let (mut t, mut x, mut f, mut u) = match reviews.amendment(&key) {
                    Some(Feedback::Amend {
                        memory_type,
                        text,
                        valid_from,
                        valid_until,
                        ..
                    }) => (memory_type, text, valid_from, valid_until),
                    _ => (None, None, None, None),
                };
                t = memory_type.clone().or(t);
                x = text.clone().or(x);
                f = valid_from.or(f);
                u = valid_until.or(u);
                let record = Feedback::Amend {
                    tenant: tenant.into(),
                    node: node.clone(),
                    memory_type: t,
                    text: x,
                    valid_from: f,
                    valid_until: u,
                    by: Some(proposer),
                    at: Some(now),
                    proposal: Some(id.into()),
                };
                record
                    .validate()
                    .map_err(|e| ApiError::bad_request(e.to_string()))?;
                Ok(vec![reviews.publish(&record).await?])
            }
            Change::Judgement {
                relation,
                from,
                to,
                verdict,
            } => {
                let record = match epigraph_schemas::feedback::Judged::parse(relation) {
                    Some(judged) => Feedback::Review {
                        tenant: tenant.into(),
                        relation: judged,
                        from: from.clone(),
                        to: to.clone(),
                        verdict: *verdict,
                        reason: proposal.why.clone(),
                        by: Some(proposer),
                        at: Some(now),
                    },
                    None => Feedback::Identity {
                        tenant: tenant.into(),
                        a: from.clone(),
                        b: to.clone(),
                        verdict: if *verdict == ReviewVerdict::Reject {
                            IdentityVerdict::Distinct
                        } else {
                            IdentityVerdict::Same
                        },
                    },
                };
                record
                    .validate()
                    .map_err(|e| ApiError::bad_request(e.to_string()))?;
                Ok(vec![reviews.publish(&record).await?])
            }
        }
    }
}
