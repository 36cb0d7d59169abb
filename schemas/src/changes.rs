//! Change notices on `epigraph.changes` (JSON, one per tenant and epoch, key: the tenant): after
//! `epigraph run` wrote an epoch to Neo4j and LanceDB, it says which tenants changed, so live
//! readers (the dashboard feed of `epigraph serve`) read the stores again at once instead of
//! polling them. A notice carries no data: the stores stay the one place to read from.

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
