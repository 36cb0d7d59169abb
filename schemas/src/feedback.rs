//! Feedback flowing back into the pipeline on `epigraph.feedback` (JSON, one record per Kafka
//! message): human identity verdicts from reviewers and dashboards, and usage reported by the
//! query service.
//!
//! The topic is compacted. A verdict's key names the pair, so a later verdict on the same pair
//! replaces the earlier one and a tombstone (a null payload) on the key **withdraws** it, which
//! restores exactly the state before the verdict.

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
}

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
    /// The Kafka key: `<tenant>/identity/<smaller id>/<larger id>` or
    /// `<tenant>/usage/<node id>/<at>`.
    pub fn key(&self) -> String {
        match self {
            Feedback::Identity { tenant, a, b, .. } => {
                let (x, y) = if a <= b { (a, b) } else { (b, a) };
                format!("{tenant}/identity/{x}/{y}")
            }
            Feedback::Usage {
                tenant,
                node_id,
                at,
            } => format!("{tenant}/usage/{node_id}/{at}"),
        }
    }

    /// The tenant.
    pub fn tenant(&self) -> &str {
        match self {
            Feedback::Identity { tenant, .. } | Feedback::Usage { tenant, .. } => tenant,
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
