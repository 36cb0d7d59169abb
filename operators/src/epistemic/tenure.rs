//! Entity relations that end: "Maya now reports to Ana" ends "Maya reports to Tom", "Tom took
//! over Atlas" ends "Atlas is managed by Maya", "Maya left the Platform team" ends her
//! membership (the org knowledge graph's validity intervals, Mind Graph's dynamic facts).
//!
//! Two rules of `ontology/relations.toml` say when a dynamic relation stops holding:
//! - **exclusive** relations (`exclusive = "from"` or `"to"`): that side has one partner at a
//!   time, so a partner last stated at `t` is ended by the first statement of another partner
//!   after `t` ([`succession`]). A partner stated again later is current again.
//! - **ending** relations (`ends = [...]`): a statement of `left` between two entities ends each
//!   listed relation between the same two entities that was last stated before it
//!   ([`ended_by`]).
//!
//! The relation keeps its node and its `t_valid`; it gains `t_invalid`, so the graph answers
//! "who manages Atlas now?" and "as of March?" alike. Incremental like the rest: the end is a
//! function of the statements in force, so retracting the later statement reopens the
//! relation.

use std::collections::BTreeMap;

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use timely::progress::Timestamp;

use crate::model::Relation;
use crate::ontology::{Exclusive, Ontology};

/// Which relations end and how (compiled from the relation vocabulary).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tenure {
    /// Neo4j type → the side with one partner at a time.
    exclusive: BTreeMap<String, Exclusive>,
    /// Neo4j type of an ending relation → the types it ends.
    ends: BTreeMap<String, Vec<String>>,
}

impl Tenure {
    /// The rules of an ontology's relations.
    ///
    /// ```
    /// let tenure = epigraph_operators::epistemic::tenure::Tenure::new(&epigraph_operators::Ontology::bundled());
    /// assert!(!tenure.is_empty());
    /// ```
    pub fn new(ontology: &Ontology) -> Self {
        let mut tenure = Tenure::default();
        for relation in &ontology.relations {
            if let Some(side) = relation.exclusive {
                tenure.exclusive.insert(relation.rel_type(), side);
            }
            if !relation.ends.is_empty() {
                tenure
                    .ends
                    .insert(relation.rel_type(), relation.ends.clone());
            }
        }
        tenure
    }

    /// Whether no relation ever ends.
    pub fn is_empty(&self) -> bool {
        self.exclusive.is_empty() && self.ends.is_empty()
    }
}

/// For each partner of an exclusive relation (with the times it was stated), when it stopped
/// being the one: the first statement of another partner after its own last statement, if any.
///
/// ```
/// use epigraph_operators::epistemic::tenure::succession;
/// // Maya reports to Tom (days 1 and 3), then to Ana (day 5).
/// assert_eq!(succession(&[("tom", 1), ("tom", 3), ("ana", 5)]), [("ana", None), ("tom", Some(5))]);
/// // Back to Tom on day 9: Tom is current again, Ana's tenure ended on day 9.
/// assert_eq!(
///     succession(&[("tom", 1), ("ana", 5), ("tom", 9)]),
///     [("ana", Some(9)), ("tom", None)]
/// );
/// // Two partners stated at the same instant end neither.
/// assert_eq!(succession(&[("tom", 1), ("ana", 1)]), [("ana", None), ("tom", None)]);
/// ```
pub fn succession<K: Ord + Clone>(stated: &[(K, i64)]) -> Vec<(K, Option<i64>)> {
    let mut last: BTreeMap<&K, i64> = BTreeMap::new();
    for (partner, t) in stated {
        let entry = last.entry(partner).or_insert(*t);
        *entry = (*entry).max(*t);
    }
    last.iter()
        .map(|(partner, until)| {
            let end = stated
                .iter()
                .filter(|(other, t)| other != *partner && t > until)
                .map(|(_, t)| *t)
                .min();
            ((*partner).clone(), end)
        })
        .collect()
}

/// When a relation last stated at `last_stated` was ended by one of the ending statements at
/// `ending`: the first of them after it.
///
/// ```
/// use epigraph_operators::epistemic::tenure::ended_by;
/// assert_eq!(ended_by(3, &[2, 7, 9]), Some(7));
/// // Rejoining after leaving: the relation restated on day 8 outlives the departure of day 7.
/// assert_eq!(ended_by(8, &[7]), None);
/// ```
pub fn ended_by(last_stated: i64, ending: &[i64]) -> Option<i64> {
    ending.iter().copied().filter(|t| *t > last_stated).min()
}

/// The end of every relation that ended: `(relation id, t_invalid)`, from all the statements
/// of entity relations (one per source that states one, before they are aggregated).
pub fn relation_ends<'s, T>(
    statements: VecCollection<'s, T, Relation>,
    tenure: &Tenure,
) -> VecCollection<'s, T, (String, i64)>
where
    T: Timestamp + Lattice,
{
    let exclusive = tenure.exclusive.clone();
    let succeeded = statements
        .clone()
        .flat_map(move |r| {
            let side = *exclusive.get(&r.rel_type)?;
            let t = r.t_valid?;
            let (anchor, partner) = match side {
                Exclusive::From => (r.from, r.to),
                Exclusive::To => (r.to, r.from),
            };
            Some(((r.tenant, r.rel_type, anchor), (partner, t, r.id)))
        })
        .reduce(|_group, input, out| {
            let stated: Vec<(&str, i64)> = input
                .iter()
                .map(|((partner, t, _), _)| (partner.as_str(), *t))
                .collect();
            let ids: BTreeMap<&str, &str> = input
                .iter()
                .map(|((partner, _, id), _)| (partner.as_str(), id.as_str()))
                .collect();
            for (partner, end) in succession(&stated) {
                if let Some(end) = end {
                    out.push(((ids[partner].to_string(), end), 1));
                }
            }
        })
        .map(|(_, ended)| ended);
    let ends = tenure.ends.clone();
    let leaving = statements
        .clone()
        .flat_map(move |r| {
            let ended = ends.get(&r.rel_type).cloned().unwrap_or_default();
            let t = r.t_valid;
            ended.into_iter().filter_map(move |rel_type| {
                let id = Relation::structural(&r.tenant, &rel_type, &r.from, &r.to, None).id;
                t.map(|t| (id, t))
            })
        })
        .reduce(|_id, input, out| {
            for (t, _) in input {
                out.push((**t, 1));
            }
        });
    let last_stated = statements
        .flat_map(|r| r.t_valid.map(|t| (r.id, t)))
        .reduce(|_id, input, out| {
            // Sorted input: the last is the latest statement.
            out.push((*input[input.len() - 1].0, 1));
        });
    let left = last_stated.join(leaving).reduce(|_id, input, out| {
        let last = input[0].0.0;
        let ending: Vec<i64> = input.iter().map(|((_, t), _)| *t).collect();
        if let Some(end) = ended_by(last, &ending) {
            out.push((end, 1));
        }
    });
    succeeded
        .concat(left)
        .reduce(|_id, input, out| out.push((*input[0].0, 1)))
}

/// The aggregated relations with the ends of [`relation_ends`] written into `t_invalid`.
pub fn with_ends<'s, T>(
    relations: VecCollection<'s, T, Relation>,
    ends: VecCollection<'s, T, (String, i64)>,
) -> VecCollection<'s, T, Relation>
where
    T: Timestamp + Lattice,
{
    let keyed = relations.map(|r| (r.id.clone(), r));
    let ended = keyed.clone().join_map(ends.clone(), |_, r, end| {
        let mut r = r.clone();
        r.t_invalid = Some(*end);
        r
    });
    let open = keyed
        .antijoin(ends.map(|(id, _)| id))
        .map(|(_, relation)| relation);
    ended.concat(open)
}
