//! Reviewers' verdicts on the judgements of this module: a rejected judgement is retracted
//! before anything follows from it, a confirmed one is marked.
//!
//! A [`Review`] names an edge by tenant, relationship type and endpoints. [`without_rejected`]
//! removes the rejected links from the links the rules found, so a rejected `SUPERSEDES` leaves
//! the older statement current and a rejected `ANSWERS` leaves the question open;
//! [`asserted_links`] adds the edges a reviewer (or an applied proposal) asserts, whether or not
//! the rules draw them, so what follows from them follows; [`marked`] sets `review:
//! "confirmed"` or `"asserted"` on those edges. All are functions of the current reviews:
//! withdrawing a review (its retraction) restores exactly the state before.
//!
//! A confirmation or rejection of an edge the rules do not draw (or no longer draw) changes
//! nothing, and a rule that later draws the edge finds the review waiting: a rejection holds
//! across new sources, restarts and rebuilds (the reviews are replayed from the feedback topic).
//! An assertion between memory objects that do not (or no longer) exist draws nothing.

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use serde::{Deserialize, Serialize};
use timely::progress::Timestamp;

use epigraph_schemas::feedback::{Judged, ReviewVerdict};

use super::judge::{Link, LinkKind};
use crate::model::{MemoryObject, Relation};

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
    /// Confirmed, rejected or asserted.
    pub verdict: ReviewVerdict,
}

/// `(tenant, relationship type, from, to)`: what identifies a judged edge.
pub type EdgeKey = (String, String, String, String);

impl Review {
    /// The keys of the edges the review is about: a `CONTRADICTS` review covers both
    /// directions (the rules draw the pair both ways).
    ///
    /// ```
    /// use epigraph_operators::epistemic::review::Review;
    /// use epigraph_schemas::feedback::ReviewVerdict;
    /// let review = |rel: &str| Review { tenant: "t".into(), rel_type: rel.into(),
    ///     from: "a".into(), to: "b".into(), verdict: ReviewVerdict::Reject };
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

/// The keys of the edges reviewed with `verdict`, once each.
fn keys<'s, T>(
    reviews: VecCollection<'s, T, Review>,
    verdict: ReviewVerdict,
) -> VecCollection<'s, T, EdgeKey>
where
    T: Timestamp + Lattice,
{
    reviews
        .filter(move |r| r.verdict == verdict)
        .flat_map(|r| r.edges())
        .distinct()
}

/// `items` without those whose key a review rejected.
///
/// ```
/// use differential_dataflow::input::Input;
/// use epigraph_operators::epistemic::review::{Review, without_rejected};
/// use epigraph_schemas::feedback::ReviewVerdict;
/// use timely::dataflow::operators::capture::{Capture, Extract};
///
/// let captured = timely::example(|scope| {
///     let edges = scope.new_collection_from(vec!["b".to_string(), "c".to_string()]).1;
///     let reviews = scope.new_collection_from(vec![Review { tenant: "t".into(),
///         rel_type: "CONTRADICTS".into(), from: "b".into(), to: "a".into(),
///         verdict: ReviewVerdict::Reject }]).1;
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
        .antijoin(keys(reviews, ReviewVerdict::Reject))
        .map(|(_, item)| item)
}

/// The value of the `review` property of a confirmed edge.
pub const CONFIRMED: &str = "confirmed";

/// The value of the `review` property of an asserted edge.
pub const ASSERTED: &str = "asserted";

/// `relations` with `review: "confirmed"` on those a review confirmed and `review: "asserted"`
/// on those a review asserted.
pub fn marked<'s, T>(
    relations: VecCollection<'s, T, Relation>,
    reviews: VecCollection<'s, T, Review>,
) -> VecCollection<'s, T, Relation>
where
    T: Timestamp + Lattice,
{
    let confirmed = keys(reviews.clone(), ReviewVerdict::Confirm)
        .map(|k| (k, CONFIRMED.to_string()))
        .concat(keys(reviews, ReviewVerdict::Assert).map(|k| (k, ASSERTED.to_string())));
    let keyed = relations.map(|r| (edge_key(&r), r));
    let marked = keyed.clone().join_map(confirmed.clone(), |_, r, mark| {
        let mut r = r.clone();
        r.review = Some(mark.clone());
        r
    });
    keyed
        .antijoin(confirmed.map(|(k, _)| k).distinct())
        .map(|(_, r)| r)
        .concat(marked)
}

/// The link kind of a judgement.
fn link_kind(rel_type: &str) -> Option<LinkKind> {
    Some(match Judged::parse(rel_type)? {
        Judged::Supersedes => LinkKind::Supersedes,
        Judged::Contradicts => LinkKind::Contradicts,
        Judged::Answers => LinkKind::Answers,
        Judged::Blocks => LinkKind::Blocks,
        Judged::Supports => LinkKind::Supports,
        Judged::Implements => LinkKind::Implements,
    })
}

/// The links the reviews assert between memory objects of `memories` (both must exist, in the
/// review's tenant), valid from when the later of the two became valid.
///
/// ```
/// use differential_dataflow::input::Input;
/// use epigraph_operators::epistemic::review::{Review, asserted_links};
/// use epigraph_operators::{EpistemicType, MemoryObject, Standing, StatementType, TemporalType};
/// use epigraph_schemas::feedback::ReviewVerdict;
/// use timely::dataflow::operators::capture::{Capture, Extract};
///
/// let memory = |id: &str, t: i64| MemoryObject {
///     id: id.into(), tenant: "t".into(), memory_type: EpistemicType::Decision,
///     statement_type: StatementType::Fact, temporal_type: TemporalType::Dynamic, text: id.into(),
///     title: None, section: None, outline: vec![], source_id: id.into(), source_version: "v".into(), span: (0, 1),
///     extractor: "x".into(), confidence: 900, t_valid: Some(t), t_invalid: None,
///     standing: Standing::Current, recorded_at: None, header: false };
/// let captured = timely::example(move |scope| {
///     let memories = scope.new_collection_from(vec![memory("old", 1), memory("new", 5)]).1;
///     let review = |to: &str| Review { tenant: "t".into(), rel_type: "SUPERSEDES".into(),
///         from: "new".into(), to: to.into(), verdict: ReviewVerdict::Assert };
///     let reviews = scope.new_collection_from(vec![review("old"), review("gone")]).1;
///     asserted_links(reviews, memories).inner.capture()
/// });
/// let links: Vec<_> = captured.extract().into_iter().flat_map(|(_, v)| v).map(|(l, _, _)| l).collect();
/// assert_eq!(links.len(), 1, "no link to a memory object that does not exist");
/// assert_eq!((links[0].to.as_str(), links[0].t_valid), ("old", Some(5)));
/// ```
pub fn asserted_links<'s, T>(
    reviews: VecCollection<'s, T, Review>,
    memories: VecCollection<'s, T, MemoryObject>,
) -> VecCollection<'s, T, Link>
where
    T: Timestamp + Lattice,
{
    let times = memories.map(|m| (m.id.clone(), (m.tenant.clone(), m.t_valid, m.recorded_at)));
    keys(reviews, ReviewVerdict::Assert)
        .map(|(tenant, rel, from, to)| (from, (tenant, rel, to)))
        .join_map(
            times.clone(),
            |from, (tenant, rel, to), (owner, t, recorded)| {
                (
                    to.clone(),
                    (
                        from.clone(),
                        tenant.clone(),
                        rel.clone(),
                        tenant == owner,
                        *t,
                        *recorded,
                    ),
                )
            },
        )
        .join_map(
            times,
            |to, (from, tenant, rel, same, t1, r1), (owner, t2, r2)| {
                let kind = link_kind(rel).filter(|_| *same && tenant == owner)?;
                Some(Link {
                    kind,
                    tenant: tenant.clone(),
                    from: from.clone(),
                    to: to.clone(),
                    t_valid: (*t1).max(*t2),
                    t_invalid: None,
                    recorded_at: (*r1).max(*r2),
                    evidence: vec![super::why::ASSERTED.to_string()],
                })
            },
        )
        .flat_map(|link| link)
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
