//! Change notices on `epigraph.changes` (JSON, one per tenant and epoch, key: the tenant): after
//! `epigraph run` wrote an epoch to Neo4j and LanceDB, it says which tenants changed, so live
//! readers (the dashboard feed of `epigraph serve`) read the stores again at once instead of
//! polling them. A notice carries no data: the stores stay the one place to read from.
//!
//! Priority samples on `epigraph.priorities` (JSON, key: `<tenant>/<node>`, kept 30 days): after
//! each epoch it wrote, `epigraph run` publishes the new K (and its terms) of every memory node
//! whose priority changed, so that K's history can be drawn and its movers listed (OIDA lists
//! longitudinal K as the missing test).

use serde::{Deserialize, Serialize};

/// One tenant's change in one written epoch.
///
/// ```
/// use epigraph_schemas::changes::ChangeNotice;
/// let notice = ChangeNotice { tenant: "acme".into(), epoch: 7, elements: 12, at_ms: 1_780_000_000_000 };
/// let json = serde_json::to_string(&notice).unwrap();
/// assert_eq!(json, r#"{"tenant":"acme","epoch":7,"elements":12,"at_ms":1780000000000}"#);
/// assert_eq!(serde_json::from_str::<ChangeNotice>(&json).unwrap(), notice);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeNotice {
    /// The tenant whose graph changed.
    pub tenant: String,
    /// The run's epoch that was written (0: the restore at start).
    pub epoch: u64,
    /// How many of the tenant's graph elements were written or deleted (epoch 0: how many it
    /// holds after the restore).
    pub elements: u64,
    /// When the stores acknowledged the writes (ms since the Unix epoch).
    pub at_ms: i64,
}

/// A memory node's priority K and its terms (OIDA Eq. 1) when an epoch changed it.
///
/// ```
/// use epigraph_schemas::changes::PrioritySample;
/// let sample = PrioritySample { tenant: "acme".into(), node: "m1".into(), at_ms: 5, k: 0.5,
///     s: 0.6, h: 0.0, u: 0.0, e: 0.1, g: 0.05, c: 0.0, decay: 0.01, unclamped: Some(0.5) };
/// assert_eq!(sample.key(), "acme/m1");
/// let json = serde_json::to_string(&sample).unwrap();
/// assert_eq!(serde_json::from_str::<PrioritySample>(&json).unwrap(), sample);
/// // A sample written before session 56 has no value before the clamp.
/// let old = r#"{"tenant":"acme","node":"m1","at_ms":5,"k":1.0,"s":1.0,"h":0.0,"u":0.0,
///     "e":0.0,"g":0.0,"c":0.0,"decay":0.0}"#;
/// assert_eq!(serde_json::from_str::<PrioritySample>(old).unwrap().unclamped, None);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrioritySample {
    /// Tenant.
    pub tenant: String,
    /// The memory node.
    pub node: String,
    /// When the epoch that changed it was written (ms since the Unix epoch).
    pub at_ms: i64,
    /// K* in [0, 1].
    pub k: f64,
    /// Type prior.
    pub s: f64,
    /// Open-question urgency.
    pub h: f64,
    /// Usage.
    pub u: f64,
    /// Evidence.
    pub e: f64,
    /// Graph influence.
    pub g: f64,
    /// Contradiction and demotion penalty.
    pub c: f64,
    /// Decay force.
    pub decay: f64,
    /// K* before the clamps of K and h: orders nodes that stand at a bound (0 or 1); equal to
    /// `k` inside. `None` in samples written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unclamped: Option<f64>,
}

impl PrioritySample {
    /// The Kafka key: `<tenant>/<node>`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.tenant, self.node)
    }
}
