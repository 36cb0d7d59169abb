//! Reviewers' verdicts on the judgements of this module: a rejected judgement is retracted
//! before anything follows from it, a confirmed one is marked.
//!
//! A [`Review`] names an edge by tenant, relationship type and endpoints. [`without_rejected`]
//! removes the rejected links from the links the rules found, so a rejected `SUPERSEDES` leaves
//! the older statement current and a rejected `ANSWERS` leaves the question open;
//! [`marked`] sets `review: "confirmed"` on the confirmed edges. Both are functions of the
//! current reviews: withdrawing a review (its retraction) restores exactly the state before.
//!
//! A review of an edge the rules do not draw (or no longer draw) changes nothing, and a rule
//! that later draws the edge finds the review waiting: a rejection holds across new sources,
//! restarts and rebuilds (the reviews are replayed from the feedback topic).

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use serde::{Deserialize, Serialize};
use timely::progress::Timestamp;

use epigraph_schemas::feedback::Judged;

use crate::model::Relation;

/// A reviewer's verdict on one judged edge.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Review {
    /// Tenant.
    pub tenant: String,
    /// The edge's relationship type (`CONTRADICTS`, `SUPERSEDES`, …).
    pub rel_type: String,
    /// The edge's start.
    pub from: String,
    /// The edge's end.
    pub to: String,
    /// Whether the judgement stands (`true`) or is rejected (`false`).
    pub confirmed: bool,
}

/// `(tenant, relationship type, from, to)`: what identifies a judged edge.
pub type EdgeKey = (String, String, String, String);

impl Review {
    /// The keys of the edges the review is about: a `CONTRADICTS` review covers both
    /// directions (the rules draw the pair both ways).
    ///
    /// ```
    /// use epigraph_operators::epistemic::review::Review;
    /// let review = |rel: &str| Review { tenant: "t".into(), rel_type: rel.into(),
    ///     from: "a".into(), to: "b".into(), confirmed: false };
    /// assert_eq!(review("CONTRADICTS").edges().len(), 2);
    /// assert_eq!(review("SUPERSEDES").edges().len(), 1);
    /// ```
    pub fn edges(&self) -> Vec<EdgeKey> {
        let key = |from: &str, to: &str| {
            (
                self.tenant.clone(),
                self.rel_type.clone(),
                from.to_string(),
                to.to_string(),
            )
        };
        if self.rel_type == "CONTRADICTS" {
            vec![key(&self.from, &self.to), key(&self.to, &self.from)]
        } else {
            vec![key(&self.from, &self.to)]
        }
    }
}

/// The keys of the edges reviewed with `confirmed`, once each.
fn keys<'s, T>(
    reviews: VecCollection<'s, T, Review>,
    confirmed: bool,
) -> VecCollection<'s, T, EdgeKey>
where
    T: Timestamp + Lattice,
{
    reviews
        .filter(move |r| r.confirmed == confirmed)
        .flat_map(|r| r.edges())
        .distinct()
}

/// `items` without those whose key a review rejected.
///
/// ```
/// use differential_dataflow::input::Input;
/// use epigraph_operators::epistemic::review::{Review, without_rejected};
/// use timely::dataflow::operators::capture::{Capture, Extract};
///
/// let captured = timely::example(|scope| {
///     let edges = scope.new_collection_from(vec!["b".to_string(), "c".to_string()]).1;
///     let reviews = scope.new_collection_from(vec![Review { tenant: "t".into(),
///         rel_type: "CONTRADICTS".into(), from: "b".into(), to: "a".into(), confirmed: false }]).1;
///     // The edges a → b and a → c, keyed by their end.
///     let key = |to: &String| ("t".to_string(), "CONTRADICTS".to_string(), "a".to_string(), to.clone());
///     without_rejected(edges, reviews, key).consolidate().inner.capture()
/// });
/// let kept: Vec<String> = captured.extract().into_iter().flat_map(|(_, v)| v).map(|(e, _, _)| e).collect();
/// assert_eq!(kept, ["c"], "rejecting b–a rejects a → b too");
/// ```
pub fn without_rejected<'s, T, D>(
    items: VecCollection<'s, T, D>,
    reviews: VecCollection<'s, T, Review>,
    key: impl Fn(&D) -> EdgeKey + 'static,
) -> VecCollection<'s, T, D>
where
    T: Timestamp + Lattice,
    D: differential_dataflow::ExchangeData + std::hash::Hash,
{
    items
        .map(move |item| (key(&item), item))
        .antijoin(keys(reviews, false))
        .map(|(_, item)| item)
}

/// The value of the `review` property of a confirmed edge.
pub const CONFIRMED: &str = "confirmed";

/// `relations` with `review: "confirmed"` on those a review confirmed.
pub fn marked<'s, T>(
    relations: VecCollection<'s, T, Relation>,
    reviews: VecCollection<'s, T, Review>,
) -> VecCollection<'s, T, Relation>
where
    T: Timestamp + Lattice,
{
    let confirmed = keys(reviews, true);
    let keyed = relations.map(|r| (edge_key(&r), r));
    let marked = keyed.clone().semijoin(confirmed.clone()).map(|(_, mut r)| {
        r.review = Some(CONFIRMED.to_string());
        r
    });
    keyed.antijoin(confirmed).map(|(_, r)| r).concat(marked)
}

/// Whether a reviewer can confirm or reject edges of this type (the judgements of
/// [`epigraph_schemas::feedback::Judged`]).
///
/// ```
/// use epigraph_operators::epistemic::review::reviewable;
/// assert!(reviewable("SUPERSEDES") && !reviewable("MENTIONS"));
/// ```
pub fn reviewable(rel_type: &str) -> bool {
    Judged::ALL.iter().any(|j| j.rel_type() == rel_type)
}

/// The key of a relation.
pub fn edge_key(r: &Relation) -> EdgeKey {
    (
        r.tenant.clone(),
        r.rel_type.clone(),
        r.from.clone(),
        r.to.clone(),
    )
}
