//! From an epoch's consolidated updates to the writes a sink applies.

use std::collections::BTreeMap;

use crate::model::GraphElement;

/// The net writes of one sealed epoch: elements to upsert (by id) and elements to delete.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SinkChanges {
    /// Elements whose id is live after the epoch, with their new content.
    pub upserts: Vec<GraphElement>,
    /// Elements whose id is gone after the epoch.
    pub deletes: Vec<GraphElement>,
}

impl SinkChanges {
    /// Whether the epoch changed nothing.
    pub fn is_empty(&self) -> bool {
        self.upserts.is_empty() && self.deletes.is_empty()
    }
}

/// Net changes per element id: an id with a positive update is upserted with that content (an
/// edit arrives as `-old, +new` under one id); an id with only negative updates is deleted.
///
/// ```
/// use epigraph_operators::{GraphElement, Relation, net_changes};
/// let edge = |to: &str| {
///     let mut edge = Relation::structural("t", "X", "a", to, None);
///     edge.id = "e".into();
///     GraphElement::Relation(edge)
/// };
/// let changes = net_changes(vec![(edge("b"), -1), (edge("c"), 1), (edge("c"), -1), (edge("c"), 1)]);
/// assert_eq!(changes.upserts, vec![edge("c")]);
/// assert!(changes.deletes.is_empty());
/// ```
pub fn net_changes(updates: impl IntoIterator<Item = (GraphElement, isize)>) -> SinkChanges {
    let mut totals: BTreeMap<GraphElement, isize> = BTreeMap::new();
    for (element, diff) in updates {
        *totals.entry(element).or_default() += diff;
    }
    let mut by_id: BTreeMap<String, (Option<GraphElement>, Option<GraphElement>)> = BTreeMap::new();
    for (element, total) in totals {
        let slot = by_id.entry(element.id().to_string()).or_default();
        match total {
            t if t > 0 => slot.0 = Some(element),
            t if t < 0 => slot.1 = Some(element),
            _ => {}
        }
    }
    let mut changes = SinkChanges::default();
    for (_, (live, gone)) in by_id {
        match (live, gone) {
            (Some(live), _) => changes.upserts.push(live),
            (None, Some(gone)) => changes.deletes.push(gone),
            (None, None) => {}
        }
    }
    changes
}
