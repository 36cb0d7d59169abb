//! Node priorities K(v): OIDA's update rule (Eq. 1) as an incremental fixpoint.
//!
//! ```text
//! K ← clamp[0,1]( (1−η)K + η·[s + h + u + e + g] − λ_type·Δt·K − c )            (Eq. 1)
//! ```
//!
//! For fixed inputs, the value Eq. 1 settles at satisfies K = (1−η)K + η·F − λΔt·K − c, that is
//!
//! ```text
//! K*_i = clamp[0,1]( (η·(s_i + h_i + u_i + e_i + g_i(K*)) − c_i) / (η + λ_i·Δt_i) )
//! ```
//!
//! where only the graph influence g_i depends on other nodes. [`priorities`] computes this
//! fixed point for every node with `iterate`, in fixed-point integers ([`Fixed`], millionths):
//! each node carries a bracket [`Priority::k`] ≤ K* ≤ [`Priority::k_upper`], starting from
//! [0, 1]; the lower end is rounded down and the upper end up, and both ends are monotone in
//! the neighbours' brackets, so the lower ends only rise and the upper ends only fall. The
//! iteration therefore stops, exactly, after finitely many rounds, and never oscillates; the
//! contraction bound checked on load (Appendix D, [`PriorityConfig::contraction`]) makes the
//! fixed point unique and the bracket a few millionths wide. With the bundled constants the
//! bound is 0.4, which predicts about 16 rounds; random graphs of 5 edges per node take 8.
//!
//! The terms (Appendix C; constants in `ontology/priority.toml`, `types.toml`, `edges.toml`):
//! - s: the type prior (Table 1);
//! - h: urgency of an open QUESTION: clamp(age/30 · 0.3 + blocking · 0.2 + stakes · 0.5, 0, 1);
//! - u: usage, a_u · Σ 2^(−τ/half-life) over the node's retrievals;
//! - e: evidence, a_e per inbound SUPPORTS (edge types with `evidence = true`);
//! - g: influence, a_g · mean over inbound edges j→i of COEFF · tanh(g_scale · K_j);
//! - c: penalty, a_c per inbound CONTRADICTS or BLOCKS (`penalises = true`) and a_s per inbound
//!   SUPERSEDES (`demoting`, whose influence flows from the replaced node to its successor),
//!   and a_r once if the node's source document is retired ([`PriorityNode::retired`]) and no
//!   demoting edge reaches the node (a statement of the replacing document superseding it
//!   already costs a_s);
//! - Δt: the node's age in days at `now`, capped; a negative λ (growth) holds only while open.
//!
//! Time enters only as data: the [`Now`] collection. Advancing it moves h, u and Δt.
//! `docs/priority.md` has the derivation, the choices and the measurements.

use serde::{Deserialize, Serialize};

use crate::model::EpistemicType;

mod config;
mod fixed;
mod graph;
mod operator;
mod solve;
mod terms;

pub use crate::model::{Fixed, Priority, SCALE};
pub use config::{
    Contraction, EdgeRole, EvidenceSettings, InfluenceSettings, PenaltySettings, PriorityConfig,
    PriorityConfigError, PrioritySettings, TypeConstants, UrgencySettings, UsageSettings,
};
pub use graph::prioritise;
pub use operator::priorities;
pub use solve::{Solution, solve};

/// A memory node, as the priority operator needs it. One per node: when several records share
/// a tenant and id, the smallest (by `Ord`) is used.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PriorityNode {
    /// Tenant.
    pub tenant: String,
    /// Node id (the memory object's id).
    pub id: String,
    /// Epistemic type: gives s and λ.
    pub memory_type: EpistemicType,
    /// When it was created (ms since the Unix epoch): its age at `now` drives Δt and h.
    pub created_ms: i64,
    /// An open question not yet answered: only then is h non-zero and a negative λ applied.
    pub open: bool,
    /// How many nodes it blocks (B of h).
    pub blocking: u32,
    /// Stakes multiplier (S of h), if stated; otherwise the configured default.
    pub stakes: Option<Fixed>,
    /// Its source document is retired (replaced by another, or withdrawn, rejected, … by its
    /// own header): c adds a_r once.
    pub retired: bool,
    /// It is its document's status line (`Status: Accepted`): metadata about the document,
    /// not a statement of its own; c adds a_m once.
    pub metadata: bool,
}

/// A signed edge between two memory nodes of one tenant: `from` acts on `to` (Appendix B).
/// Edge types that are not configured are ignored, as are self-loops and edges whose ends are
/// not nodes; duplicates count once.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PriorityEdge {
    /// Tenant.
    pub tenant: String,
    /// The acting node.
    pub from: String,
    /// The node acted on.
    pub to: String,
    /// Edge type, e.g. `SUPPORTS`, `CONTRADICTS`, `SUPERSEDES`.
    pub rel_type: String,
}

/// One retrieval of a node, reported by the query service. Each record counts (two
/// identical retrievals count twice). A retrieval after `now` counts as happening now.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Usage {
    /// Tenant.
    pub tenant: String,
    /// The retrieved node.
    pub id: String,
    /// When (ms since the Unix epoch).
    pub at_ms: i64,
}

/// The clock, ms since the Unix epoch. Keep one record: replace it to advance time (when there
/// are several, the latest is used; with none, there is no output).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Now(pub i64);

/// The output: a node and its priority.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PriorityWeight {
    /// Tenant.
    pub tenant: String,
    /// Node id.
    pub id: String,
    /// K* and its terms.
    pub priority: Priority,
}

#[cfg(test)]
mod tests;
