//! Proposals: changes to memory that do not come straight from a source — an agent's note or
//! decision record, a person's edit of a memory object, a judgement asserted, confirmed or
//! rejected — event-sourced on `<prefix>.proposals` (JSON, one [`ProposalRecord`] per Kafka
//! message, keyed `<tenant>/<proposal id>`, kept forever: it is the audit trail).
//!
//! The model proposes, the server decides (Planet Arkency's boundary): a proposal carries the
//! field-level diff the **server** computed against the state it read (`{field: [before,
//! after]}`), who or what proposed it, why, and what it read. It is applied at once, after a
//! review window unless rejected, or on approval; applying re-reads every `before`, and if
//! anything changed the proposal is [`ProposalState::Conflicted`] and nothing of it is applied.
//! An applied proposal enters the dataflow as an event of its own (a note on the event topics,
//! an amendment or review on the feedback topic), so replaying the topics rebuilds the same
//! state.
//!
//! ```
//! use epigraph_schemas::proposals::{ProposalState, Step};
//! let state = ProposalState::Proposed;
//! assert_eq!(state.after(&Step::Approved { reason: None }).unwrap(), ProposalState::Approved);
//! assert!(ProposalState::Applied.after(&Step::Withdrawn { reason: None }).is_err(), "applied is final");
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::feedback::{Judged, ReviewVerdict};
use crate::topics::valid_tenant;

/// One field's change: `[before, after]` (`null` where there was or will be nothing).
pub type FieldChange = [serde_json::Value; 2];

/// Who or what proposes: people and agents get different review windows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProposerKind {
    /// A person (the dashboard, the CLI, an HTTP client with a reviewer's token).
    Person,
    /// An agent (MCP, or an HTTP client with an agent's token).
    Agent,
}

impl ProposerKind {
    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ProposerKind::Person => "person",
            ProposerKind::Agent => "agent",
        }
    }
}

/// Who proposed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proposer {
    /// Person or agent.
    pub kind: ProposerKind,
    /// The token's name (the identity the server authenticated; never the token itself).
    pub identity: String,
    /// The agent's own name, as it gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The model behind the agent, as it gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// A memory object the proposer was shown, and its version then (the graph's content hash).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ReadRef {
    /// Node id.
    pub id: String,
    /// Its version when the proposal was made (`None`: it did not exist).
    #[serde(default)]
    pub version: Option<String>,
}

/// A link a note declares from itself to an existing memory object (it supersedes a decision,
/// answers a question, …): asserted when the note is applied.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteLink {
    /// The relation, from the note to `to`.
    pub relation: Judged,
    /// The existing memory object.
    pub to: String,
}

/// What a proposal changes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Change {
    /// A new memory object written by an agent or a person: a note or decision record.
    Remember {
        /// Its epistemic type (`DECISION`, `EVIDENCE`, …).
        memory_type: String,
        /// A title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The text.
        text: String,
        /// The entities it is about (names).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        about: Vec<String>,
        /// Links it declares to existing memory objects.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        links: Vec<NoteLink>,
    },
    /// An edit of one memory object's fields (left out: unchanged).
    Edit {
        /// The memory object's id.
        node: String,
        /// New epistemic type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        memory_type: Option<String>,
        /// New text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// New start of validity (ms since the Unix epoch).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        valid_from: Option<i64>,
        /// New end of validity: the object stops being current then.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        valid_until: Option<i64>,
    },
    /// A verdict on a judged edge: confirm, reject (retract) or assert a `CONTRADICTS`,
    /// `SUPERSEDES`, `ANSWERS`, `BLOCKS` or `SUPPORTS` between two memory objects, or `SAME_AS`
    /// between two entities (confirm = same, reject = distinct).
    Judgement {
        /// The relationship type.
        relation: String,
        /// Start node id.
        from: String,
        /// End node id.
        to: String,
        /// Confirm, reject or assert.
        verdict: ReviewVerdict,
    },
}

/// A proposal as proposed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Proposal {
    /// The change.
    pub change: Change,
    /// Who proposed.
    pub proposer: Proposer,
    /// Why, in the proposer's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// What the proposer read (read provenance), with the versions it had then.
    #[serde(default)]
    pub read: Vec<ReadRef>,
    /// The field-level diff the server computed: `{field: [before, after]}`.
    pub diff: BTreeMap<String, FieldChange>,
    /// The review window it falls under.
    pub window: Window,
    /// When it applies by itself (a delayed window), ms since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_at: Option<i64>,
    /// What the model extraction behind it cost, as its proposer reported it (the LLM
    /// extractor, `epigraph llm propose`); absent on other proposals and on older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extraction: Option<ExtractionCost>,
}

/// The cost of one model extraction: the calls it took (retries included), their tokens, the
/// time spent waiting for the model, and the price at the configured rates. A proposal served
/// from the extractor's cache reports the figures of the calls that filled the cache, with
/// `cached` set.
///
/// ```
/// use epigraph_schemas::proposals::ExtractionCost;
/// let old: ExtractionCost = serde_json::from_str(r#"{"prompt_tokens": 10}"#).unwrap();
/// assert_eq!(old.completion_tokens, 0);
/// assert!(!old.cached);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExtractionCost {
    /// The model's name.
    pub model: Option<String>,
    /// Chat-completion calls made (the first and every retry).
    pub calls: u32,
    /// Prompt tokens over all calls, as the endpoint counted them.
    pub prompt_tokens: u64,
    /// Completion tokens over all calls.
    pub completion_tokens: u64,
    /// Time spent waiting for the endpoint over all calls, in ms.
    pub latency_ms: u64,
    /// Price at `[llm]`'s per-1k-token rates (the currency of those rates).
    pub cost: f64,
    /// Served from the cache (no call was made for this proposal).
    pub cached: bool,
    /// The cache key: a hash of the unit's prompt, the model and the prompt version.
    pub key: Option<String>,
}

/// How long a proposal waits before it applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "mode")]
pub enum Window {
    /// Applied at once.
    Immediate,
    /// Applied after `seconds` unless rejected or withdrawn before.
    Delay {
        /// The delay.
        seconds: u64,
    },
    /// Applied when approved.
    Approval,
}

impl Window {
    /// Parse `immediate`, `approval` or `delay:<seconds>` (e.g. `delay:300`).
    ///
    /// ```
    /// use epigraph_schemas::proposals::Window;
    /// assert_eq!(Window::parse("delay:60"), Some(Window::Delay { seconds: 60 }));
    /// assert_eq!(Window::parse("approval"), Some(Window::Approval));
    /// assert_eq!(Window::parse("later"), None);
    /// ```
    pub fn parse(text: &str) -> Option<Window> {
        match text.trim().to_ascii_lowercase().as_str() {
            "immediate" => Some(Window::Immediate),
            "approval" => Some(Window::Approval),
            other => other
                .strip_prefix("delay:")
                .and_then(|s| s.trim().parse().ok())
                .map(|seconds| Window::Delay { seconds }),
        }
    }
}

/// One step in a proposal's life.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "lowercase")]
pub enum Step {
    /// Proposed (the first step).
    Proposed {
        /// The proposal.
        proposal: Box<Proposal>,
    },
    /// A reviewer approved it (it applies next).
    Approved {
        /// Why.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// A reviewer rejected it: nothing is applied.
    Rejected {
        /// Why.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Its proposer (or a reviewer) withdrew it before it applied.
    Withdrawn {
        /// Why.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Applied: the events it published, by topic key.
    Applied {
        /// The keys of the published events (source event keys, feedback keys).
        effects: Vec<String>,
    },
    /// Not applied: the state it was made against changed. `{field: [expected, found]}`.
    Conflicted {
        /// What changed.
        changed: BTreeMap<String, FieldChange>,
    },
}

impl Step {
    /// The step's name.
    pub fn name(&self) -> &'static str {
        match self {
            Step::Proposed { .. } => "proposed",
            Step::Approved { .. } => "approved",
            Step::Rejected { .. } => "rejected",
            Step::Withdrawn { .. } => "withdrawn",
            Step::Applied { .. } => "applied",
            Step::Conflicted { .. } => "conflicted",
        }
    }
}

/// One message of the proposals topic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProposalRecord {
    /// Tenant.
    pub tenant: String,
    /// The proposal's id.
    pub id: String,
    /// When the step happened (ms since the Unix epoch).
    pub at: i64,
    /// Who took the step (a token's name, `server` for the server's own steps).
    pub by: String,
    /// The step.
    #[serde(flatten)]
    pub step: Step,
}

impl ProposalRecord {
    /// The Kafka key: `<tenant>/<id>`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.tenant, self.id)
    }

    /// Parse one payload.
    pub fn parse(payload: &[u8]) -> Result<Self, ProposalError> {
        let record: ProposalRecord =
            serde_json::from_slice(payload).map_err(ProposalError::NotJson)?;
        if !valid_tenant(&record.tenant) {
            return Err(ProposalError::InvalidTenant(record.tenant));
        }
        Ok(record)
    }
}

/// Where a proposal is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProposalState {
    /// Waiting: for its window to pass or for a reviewer.
    Proposed,
    /// Approved, not yet applied.
    Approved,
    /// Rejected (final).
    Rejected,
    /// Withdrawn (final).
    Withdrawn,
    /// Applied (final).
    Applied,
    /// Not applied because the state changed (final).
    Conflicted,
}

impl ProposalState {
    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ProposalState::Proposed => "proposed",
            ProposalState::Approved => "approved",
            ProposalState::Rejected => "rejected",
            ProposalState::Withdrawn => "withdrawn",
            ProposalState::Applied => "applied",
            ProposalState::Conflicted => "conflicted",
        }
    }

    /// The state named `name`.
    pub fn parse(name: &str) -> Option<Self> {
        use ProposalState::*;
        [Proposed, Approved, Rejected, Withdrawn, Applied, Conflicted]
            .into_iter()
            .find(|s| s.as_str().eq_ignore_ascii_case(name))
    }

    /// Whether nothing can happen to it any more.
    pub fn is_final(self) -> bool {
        !matches!(self, ProposalState::Proposed | ProposalState::Approved)
    }

    /// The state after `step`, or why the step is not allowed now.
    pub fn after(self, step: &Step) -> Result<ProposalState, ProposalError> {
        use ProposalState::*;
        let next = match (self, step) {
            (Proposed, Step::Approved { .. }) => Approved,
            (Proposed, Step::Rejected { .. }) => Rejected,
            (Proposed | Approved, Step::Withdrawn { .. }) => Withdrawn,
            (Proposed | Approved, Step::Applied { .. }) => Applied,
            (Proposed | Approved, Step::Conflicted { .. }) => Conflicted,
            (state, step) => {
                return Err(ProposalError::Transition {
                    state,
                    step: step.name(),
                });
            }
        };
        Ok(next)
    }
}

/// Why a proposal record or step is refused.
#[derive(Debug, thiserror::Error)]
pub enum ProposalError {
    /// The payload is not the JSON of a [`ProposalRecord`].
    #[error("not a proposal record: {0}")]
    NotJson(#[source] serde_json::Error),
    /// The tenant is not a valid tenant name.
    #[error("invalid tenant {0:?}")]
    InvalidTenant(String),
    /// The step does not follow from the state.
    #[error("a proposal that is {} cannot be {step}", state.as_str())]
    Transition {
        /// The state it is in.
        state: ProposalState,
        /// The step asked for.
        step: &'static str,
    },
}

/// A proposal's id: 16 hex characters of a hash over the tenant, the proposer, the time and the
/// change (the same proposal sent twice in the same millisecond gets the same id).
///
/// ```
/// use epigraph_schemas::proposals::proposal_id;
/// assert_eq!(proposal_id("acme", "bot", 1, "{}").len(), 16);
/// assert_ne!(proposal_id("acme", "bot", 1, "{}"), proposal_id("acme", "bot", 2, "{}"));
/// ```
pub fn proposal_id(tenant: &str, identity: &str, at: i64, change: &str) -> String {
    let digest = Sha256::digest(format!("{tenant}\u{1f}{identity}\u{1f}{at}\u{1f}{change}"));
    hex::encode(&digest[..8])
}

/// The source id of the note an applied `remember` proposal publishes: `note/<proposal id>`.
pub fn note_source_id(proposal: &str) -> String {
    format!("note/{proposal}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_round_trips_through_json() {
        let record = ProposalRecord {
            tenant: "acme".into(),
            id: "p1".into(),
            at: 5,
            by: "bot".into(),
            step: Step::Proposed {
                proposal: Box::new(Proposal {
                    change: Change::Judgement {
                        relation: "CONTRADICTS".into(),
                        from: "a".into(),
                        to: "b".into(),
                        verdict: ReviewVerdict::Reject,
                    },
                    proposer: Proposer {
                        kind: ProposerKind::Agent,
                        identity: "bot".into(),
                        agent: Some("scout".into()),
                        model: None,
                    },
                    why: Some("different companies".into()),
                    read: vec![ReadRef {
                        id: "a".into(),
                        version: Some("h".into()),
                    }],
                    diff: BTreeMap::from([(
                        "CONTRADICTS a-b".to_string(),
                        [serde_json::json!("drawn"), serde_json::json!("rejected")],
                    )]),
                    window: Window::Delay { seconds: 5 },
                    due_at: Some(5005),
                    extraction: None,
                }),
            },
        };
        let json = serde_json::to_vec(&record).unwrap();
        assert_eq!(ProposalRecord::parse(&json).unwrap(), record);
        let text = String::from_utf8(json).unwrap();
        assert!(text.contains(r#""step":"proposed""#), "{text}");
        assert!(!text.contains("extraction"), "absent, not null: {text}");
        assert_eq!(record.key(), "acme/p1");
        // A record written before extraction costs existed still reads.
        let old = text.replace(r#","extraction":null"#, "");
        assert_eq!(ProposalRecord::parse(old.as_bytes()).unwrap(), record);
    }

    #[test]
    fn only_open_proposals_move() {
        use ProposalState::*;
        let applied = Step::Applied { effects: vec![] };
        assert_eq!(Approved.after(&applied).unwrap(), Applied);
        for state in [Rejected, Withdrawn, Applied, Conflicted] {
            assert!(state.is_final());
            assert!(state.after(&applied).is_err());
        }
        assert!(Approved.after(&Step::Approved { reason: None }).is_err());
    }
}
