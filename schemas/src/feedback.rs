//! Feedback flowing back into the pipeline on `epigraph.feedback` (JSON, one record per Kafka
//! message): human identity verdicts and reviews of the system's judgements (a contradiction,
//! supersession, answer, block or support confirmed or rejected) from reviewers and dashboards,
//! and usage reported by the query service.
//!
//! The topic is compacted. A verdict's or review's key names what it is about, so a later one on
//! the same pair replaces the earlier one and a tombstone (a null payload) on the key
//! **withdraws** it, which restores exactly the state before it. Replaying the topic (a restart,
//! `epigraph rebuild`) replays the reviews: a rejected judgement stays rejected.
//!
//! The ids inside a key are escaped ([`key_part`]: `%` and `/` percent-encoded), so that a key
//! names one pair: before session 27 they were joined as they were, and `a/b` + `c` had the key
//! of `a` + `b/c`. A record written then keeps its old key on the topic; consumers accept it
//! under that key ([`Feedback::legacy_key`]), and the query service tombstones the old key
//! whenever it writes or withdraws a review of the same pair, so the topic migrates as it is used.

use serde::{Deserialize, Serialize};

use crate::topics::valid_tenant;

/// Whether two entities are the same real thing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IdentityVerdict {
    /// They are the same: merge their components.
    Same,
    /// They are distinct: a hard separator, whatever the other evidence says.
    Distinct,
}

/// The judgements of the epistemic layer a reviewer can confirm or reject: the signed edges
/// between two memory objects (`SAME_AS` between entities is an [`IdentityVerdict`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Judged {
    /// `from` replaces `to`.
    Supersedes,
    /// `from` and `to` disagree (either direction: one review covers both edges).
    Contradicts,
    /// `from` answers the question `to`.
    Answers,
    /// The question `from` holds up `to`.
    Blocks,
    /// `from` states what `to` states.
    Supports,
    /// `from` (later) carries out the change `to` announced ("is removed" after "is
    /// deprecated"); a carried-out plan counts as done.
    Implements,
}

impl Judged {
    /// The relationship type in the graph.
    ///
    /// ```
    /// use epigraph_schemas::feedback::Judged;
    /// assert_eq!(Judged::Contradicts.rel_type(), "CONTRADICTS");
    /// assert_eq!(Judged::parse("supersedes"), Some(Judged::Supersedes));
    /// assert_eq!(Judged::parse("MENTIONS"), None);
    /// ```
    pub fn rel_type(self) -> &'static str {
        match self {
            Judged::Supersedes => "SUPERSEDES",
            Judged::Contradicts => "CONTRADICTS",
            Judged::Answers => "ANSWERS",
            Judged::Blocks => "BLOCKS",
            Judged::Supports => "SUPPORTS",
            Judged::Implements => "IMPLEMENTS",
        }
    }

    /// The judgement of a relationship type (any case), if it is one.
    pub fn parse(rel_type: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|j| j.rel_type().eq_ignore_ascii_case(rel_type))
    }

    /// Every judgement a reviewer can review.
    pub const ALL: [Judged; 6] = [
        Judged::Supersedes,
        Judged::Contradicts,
        Judged::Answers,
        Judged::Blocks,
        Judged::Supports,
        Judged::Implements,
    ];

    /// The relationship types of every judgement, for messages ("SUPERSEDES, CONTRADICTS, …").
    ///
    /// ```
    /// use epigraph_schemas::feedback::Judged;
    /// assert!(Judged::names().starts_with("SUPERSEDES, CONTRADICTS"));
    /// assert!(Judged::names().ends_with("IMPLEMENTS"));
    /// ```
    pub fn names() -> String {
        Self::ALL.map(Judged::rel_type).join(", ")
    }

    /// Whether the edge goes both ways (one review covers `a → b` and `b → a`).
    pub fn symmetric(self) -> bool {
        self == Judged::Contradicts
    }
}

/// A reviewer's verdict on one judgement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReviewVerdict {
    /// The system judged right: the edge stays and is marked `review: "confirmed"`.
    Confirm,
    /// The system judged wrong: the edge is retracted, with everything that followed from it
    /// (a rejected supersession leaves the older statement current).
    Reject,
    /// The edge holds whether or not the rules draw it (a reviewer, or an applied proposal,
    /// asserts it): it is drawn with `review: "asserted"`, and what follows from it follows (an
    /// asserted supersession makes the older statement superseded, an asserted answer closes
    /// the question).
    Assert,
}

impl ReviewVerdict {
    /// Lower-case name.
    ///
    /// ```
    /// use epigraph_schemas::feedback::ReviewVerdict;
    /// assert_eq!(ReviewVerdict::Assert.as_str(), "assert");
    /// assert_eq!(ReviewVerdict::parse("Reject"), Some(ReviewVerdict::Reject));
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewVerdict::Confirm => "confirm",
            ReviewVerdict::Reject => "reject",
            ReviewVerdict::Assert => "assert",
        }
    }

    /// The verdict named `name` (any case).
    pub fn parse(name: &str) -> Option<Self> {
        [
            ReviewVerdict::Confirm,
            ReviewVerdict::Reject,
            ReviewVerdict::Assert,
        ]
        .into_iter()
        .find(|v| v.as_str().eq_ignore_ascii_case(name))
    }
}

/// Why a feedback record is refused (the reason its message is dead-lettered with).
#[derive(Debug, thiserror::Error)]
pub enum FeedbackError {
    /// The payload is not the JSON of a [`Feedback`].
    #[error("not a feedback record: {0}")]
    NotJson(#[source] serde_json::Error),
    /// The tenant is not a valid tenant name.
    #[error("invalid tenant {tenant:?}")]
    InvalidTenant {
        /// The tenant as written.
        tenant: String,
    },
    /// An identity verdict with an empty entity id.
    #[error("an identity verdict needs two entity ids")]
    MissingEntityId {
        /// The first id as written.
        a: String,
        /// The second id as written.
        b: String,
    },
    /// An identity verdict on an entity with itself.
    #[error("an identity verdict on an entity with itself")]
    SameEntity {
        /// The id given twice.
        id: String,
    },
    /// A usage record with an empty `node_id`.
    #[error("a usage record needs a node id")]
    MissingNodeId,
    /// A review with an empty node id, or of a statement's link with itself.
    #[error("a review needs two different node ids (from {from:?}, to {to:?})")]
    ReviewEndpoints {
        /// `from` as written.
        from: String,
        /// `to` as written.
        to: String,
    },
    /// A review's reason or reviewer name over [`MAX_REVIEW_TEXT`] bytes.
    #[error("a review's reason and reviewer are at most {MAX_REVIEW_TEXT} bytes")]
    ReviewTooLong,
    /// An amendment that names no node or changes nothing.
    #[error("an amendment needs a node id and at least one field to change")]
    EmptyAmendment,
    /// An amendment's type is not an epistemic type's name.
    #[error(
        "{memory_type:?} is not an epistemic type (DECISION, CONSTRAINT, EVIDENCE, PLAN, HYPOTHESIS, OBSERVATION, EVALUATION, NARRATIVE, QUESTION)"
    )]
    AmendmentType {
        /// The type as written.
        memory_type: String,
    },
    /// An amended text that is empty or over [`MAX_AMENDED_TEXT`] bytes.
    #[error("an amended text is 1 to {MAX_AMENDED_TEXT} bytes")]
    AmendmentText,
    /// An amendment whose validity ends before it begins.
    #[error("valid_until ({until}) is before valid_from ({from})")]
    AmendmentValidity {
        /// Valid from.
        from: i64,
        /// Valid until.
        until: i64,
    },
}

/// The longest text an amendment sets, in bytes.
pub const MAX_AMENDED_TEXT: usize = 20_000;

/// The longest reason or reviewer name a review carries, in bytes.
pub const MAX_REVIEW_TEXT: usize = 2000;

/// One feedback record.
///
/// ```
/// use epigraph_schemas::feedback::{Feedback, IdentityVerdict};
/// let json = r#"{"kind":"identity","tenant":"acme","a":"e2","b":"e1","verdict":"distinct"}"#;
/// let feedback: Feedback = serde_json::from_str(json).unwrap();
/// assert_eq!(feedback.key(), "acme/identity/e1/e2", "the pair in either order has one key");
/// assert!(feedback.validate().is_ok());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Feedback {
    /// A reviewer's verdict on two entity ids (the ids of `:Entity` nodes).
    Identity {
        /// Tenant of both entities.
        tenant: String,
        /// One entity id.
        a: String,
        /// The other.
        b: String,
        /// Same or distinct.
        verdict: IdentityVerdict,
    },
    /// A reviewer's verdict on a judgement of the epistemic layer.
    Review {
        /// Tenant of both memory objects.
        tenant: String,
        /// Which judgement.
        relation: Judged,
        /// The edge's start (for `CONTRADICTS`, either side).
        from: String,
        /// The edge's end.
        to: String,
        /// Confirm or reject.
        verdict: ReviewVerdict,
        /// Why, in the reviewer's words.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// Who reviewed (the token's name, the dashboard user, the CLI's `--by`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
        /// When (ms since the Unix epoch).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<i64>,
    },
    /// A correction of one memory object's fields (an applied edit proposal): it replaces what
    /// the extractor read, until withdrawn (a tombstone on its key). Fields left out keep the
    /// extracted value.
    Amend {
        /// Tenant.
        tenant: String,
        /// The memory object's id.
        node: String,
        /// Its epistemic type, by its upper-case name
        /// ([`crate::memory::EpistemicType::name`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        memory_type: Option<String>,
        /// Its text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// Valid from (ms since the Unix epoch).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        valid_from: Option<i64>,
        /// Valid until (ms since the Unix epoch): the object stops being current then
        /// (superseded, or for a question answered).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        valid_until: Option<i64>,
        /// Who (the proposer).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
        /// When it was applied (ms since the Unix epoch).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<i64>,
        /// The proposal that applied it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        proposal: Option<String>,
    },
    /// A node was returned to a client (the usage term of the priorities).
    Usage {
        /// Tenant.
        tenant: String,
        /// The node id.
        node_id: String,
        /// When (ms since the Unix epoch).
        at: i64,
    },
}

impl Feedback {
    /// The Kafka key: `<tenant>/identity/<smaller id>/<larger id>`,
    /// `<tenant>/review/<RELATION>/<from>/<to>` (for `CONTRADICTS` the smaller id first) or
    /// `<tenant>/usage/<node id>/<at>`; the two ids of a pair escaped by [`key_part`].
    ///
    /// ```
    /// use epigraph_schemas::feedback::{Feedback, Judged, ReviewVerdict};
    /// let review = |relation, from: &str, to: &str| Feedback::Review {
    ///     tenant: "acme".into(), relation, from: from.into(), to: to.into(),
    ///     verdict: ReviewVerdict::Reject, reason: None, by: None, at: None };
    /// let contradicts = |from, to| review(Judged::Contradicts, from, to);
    /// assert_eq!(contradicts("m2", "m1").key(), "acme/review/CONTRADICTS/m1/m2");
    /// assert_eq!(contradicts("m2", "m1").key(), contradicts("m1", "m2").key(), "one pair, one key");
    /// // Two pairs of document ids that read alike once joined by `/` keep two keys.
    /// let (x, y) = (review(Judged::Supersedes, "docs/a", "b.md"), review(Judged::Supersedes, "docs", "a/b.md"));
    /// assert_eq!(x.key(), "acme/review/SUPERSEDES/docs%2Fa/b.md");
    /// assert_ne!(x.key(), y.key());
    /// ```
    pub fn key(&self) -> String {
        match self {
            Feedback::Identity { tenant, a, b, .. } => {
                let (x, y) = if a <= b { (a, b) } else { (b, a) };
                format!("{tenant}/identity/{}/{}", key_part(x), key_part(y))
            }
            Feedback::Review {
                tenant,
                relation,
                from,
                to,
                ..
            } => review_key(tenant, *relation, from, to),
            Feedback::Amend { tenant, node, .. } => amend_key(tenant, node),
            Feedback::Usage {
                tenant,
                node_id,
                at,
            } => format!("{tenant}/usage/{node_id}/{at}"),
        }
    }

    /// The key this record had before ids were escaped in keys (session 27), when that differs
    /// from [`Feedback::key`]: only an id with `/` or `%` in it changed its key. A consumer
    /// accepts a record under either.
    ///
    /// ```
    /// use epigraph_schemas::feedback::{Feedback, IdentityVerdict};
    /// let same = |a: &str, b: &str| Feedback::Identity {
    ///     tenant: "acme".into(), a: a.into(), b: b.into(), verdict: IdentityVerdict::Same };
    /// assert_eq!(same("e1", "e2").legacy_key(), None);
    /// assert_eq!(same("team/a", "e2").legacy_key().as_deref(), Some("acme/identity/e2/team/a"));
    /// assert_eq!(same("team/a", "e2").key(), "acme/identity/e2/team%2Fa");
    /// ```
    pub fn legacy_key(&self) -> Option<String> {
        let legacy = match self {
            Feedback::Identity { tenant, a, b, .. } => {
                let (x, y) = if a <= b { (a, b) } else { (b, a) };
                format!("{tenant}/identity/{x}/{y}")
            }
            Feedback::Review {
                tenant,
                relation,
                from,
                to,
                ..
            } => {
                let (from, to) = ordered(*relation, from, to);
                format!("{tenant}/review/{}/{from}/{to}", relation.rel_type())
            }
            // One id, last in its key: never ambiguous, never escaped.
            Feedback::Amend { .. } | Feedback::Usage { .. } => return None,
        };
        (legacy != self.key()).then_some(legacy)
    }

    /// Whether `key` is this record's key: [`Feedback::key`], or its [`Feedback::legacy_key`].
    pub fn keyed_by(&self, key: &str) -> bool {
        self.key() == key || self.legacy_key().as_deref() == Some(key)
    }

    /// The tenant.
    pub fn tenant(&self) -> &str {
        match self {
            Feedback::Identity { tenant, .. }
            | Feedback::Review { tenant, .. }
            | Feedback::Amend { tenant, .. }
            | Feedback::Usage { tenant, .. } => tenant,
        }
    }

    /// Checks the fields a consumer relies on.
    ///
    /// ```
    /// use epigraph_schemas::feedback::{Feedback, IdentityVerdict};
    /// let same = |a: &str, b: &str| Feedback::Identity {
    ///     tenant: "acme".into(), a: a.into(), b: b.into(), verdict: IdentityVerdict::Same };
    /// assert!(same("x", "x").validate().is_err(), "an entity with itself");
    /// assert!(same("", "x").validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<(), FeedbackError> {
        if !valid_tenant(self.tenant()) {
            return Err(FeedbackError::InvalidTenant {
                tenant: self.tenant().to_string(),
            });
        }
        match self {
            Feedback::Identity { a, b, .. } => {
                if a.is_empty() || b.is_empty() {
                    return Err(FeedbackError::MissingEntityId {
                        a: a.clone(),
                        b: b.clone(),
                    });
                }
                if a == b {
                    return Err(FeedbackError::SameEntity { id: a.clone() });
                }
            }
            Feedback::Review {
                from,
                to,
                reason,
                by,
                ..
            } => {
                if from.is_empty() || to.is_empty() || from == to {
                    return Err(FeedbackError::ReviewEndpoints {
                        from: from.clone(),
                        to: to.clone(),
                    });
                }
                let long =
                    |s: &Option<String>| s.as_ref().is_some_and(|s| s.len() > MAX_REVIEW_TEXT);
                if long(reason) || long(by) {
                    return Err(FeedbackError::ReviewTooLong);
                }
            }
            Feedback::Amend {
                node,
                memory_type,
                text,
                valid_from,
                valid_until,
                by,
                ..
            } => {
                if node.is_empty()
                    || (memory_type.is_none()
                        && text.is_none()
                        && valid_from.is_none()
                        && valid_until.is_none())
                {
                    return Err(FeedbackError::EmptyAmendment);
                }
                if let Some(t) = memory_type
                    && !crate::memory::EpistemicType::ALL
                        .iter()
                        .any(|known| known.name() == *t)
                {
                    return Err(FeedbackError::AmendmentType {
                        memory_type: t.clone(),
                    });
                }
                if text
                    .as_ref()
                    .is_some_and(|t| t.trim().is_empty() || t.len() > MAX_AMENDED_TEXT)
                {
                    return Err(FeedbackError::AmendmentText);
                }
                if let (Some(from), Some(until)) = (valid_from, valid_until)
                    && until < from
                {
                    return Err(FeedbackError::AmendmentValidity {
                        from: *from,
                        until: *until,
                    });
                }
                if by.as_ref().is_some_and(|s| s.len() > MAX_REVIEW_TEXT) {
                    return Err(FeedbackError::ReviewTooLong);
                }
            }
            Feedback::Usage { node_id, .. } => {
                if node_id.is_empty() {
                    return Err(FeedbackError::MissingNodeId);
                }
            }
        }
        Ok(())
    }

    /// Parses and validates one payload.
    ///
    /// ```
    /// use epigraph_schemas::feedback::Feedback;
    /// assert!(Feedback::parse(br#"{"kind":"identity","tenant":"a","a":"x","b":"y","verdict":"maybe"}"#).is_err());
    /// assert!(Feedback::parse(b"not json").is_err());
    /// ```
    pub fn parse(payload: &[u8]) -> Result<Self, FeedbackError> {
        let feedback: Feedback = serde_json::from_slice(payload).map_err(FeedbackError::NotJson)?;
        feedback.validate()?;
        Ok(feedback)
    }
}

/// The feedback key of an amendment of memory object `node`: `<tenant>/amend/<node>`.
///
/// ```
/// assert_eq!(epigraph_schemas::feedback::amend_key("acme", "m1"), "acme/amend/m1");
/// ```
pub fn amend_key(tenant: &str, node: &str) -> String {
    format!("{tenant}/amend/{node}")
}

/// One id as a part of a feedback key: `%` and `/` percent-encoded, every other character as
/// it is (ids without either, which is most, read the same).
///
/// ```
/// use epigraph_schemas::feedback::key_part;
/// assert_eq!(key_part("m1"), "m1");
/// assert_eq!(key_part("docs/adr/004.md"), "docs%2Fadr%2F004.md");
/// assert_eq!(key_part("50%/x"), "50%25%2Fx");
/// ```
pub fn key_part(id: &str) -> std::borrow::Cow<'_, str> {
    if !id.contains(['%', '/']) {
        return std::borrow::Cow::Borrowed(id);
    }
    std::borrow::Cow::Owned(id.replace('%', "%25").replace('/', "%2F"))
}

/// `(from, to)` as a key orders them: a symmetric relation's smaller id first.
fn ordered<'a>(relation: Judged, from: &'a str, to: &'a str) -> (&'a str, &'a str) {
    if relation.symmetric() && to < from {
        (to, from)
    } else {
        (from, to)
    }
}

/// The feedback key of a review of `relation` between `from` and `to` (see [`Feedback::key`]).
pub fn review_key(tenant: &str, relation: Judged, from: &str, to: &str) -> String {
    let (from, to) = ordered(relation, from, to);
    format!(
        "{tenant}/review/{}/{}/{}",
        relation.rel_type(),
        key_part(from),
        key_part(to)
    )
}
