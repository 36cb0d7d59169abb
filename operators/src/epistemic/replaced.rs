//! The statements of a replaced document: when a document's header says it replaces another
//! ("Supersedes: ADR 001", "Replaces: 241", or the older one's own "Superseded-By: 345"),
//! [`crate::extract::doclinks`] draws `SUPERSEDES` between the two source nodes. That tells a
//! reader which document is current, but left each statement of the older one standing
//! `current`: ADR 001's "We decided to run a three-broker Kafka cluster in our own data
//! centre." kept its place beside ADR 004's managed service.
//!
//! Here each decision, plan and constraint of the older document gets a `SUPERSEDES` edge from
//! the statement of those kinds in the newer document it shares most topic words with (at least
//! `min_shared` of `[epistemics.replaced]`; one of its own kind first, then the earliest), and
//! so stands `superseded` from when the newer document was written. A statement sharing no
//! topic word with the newer document stays as it was: the headers do not say what became of
//! it. The header block's own units (`Status: Accepted`, `Supersedes: ADR 001`) are the
//! document's metadata and take no part.
//!
//! Incremental like the rest: the edges are a join of the document edge and the two documents'
//! statements, so a header edited away, or a document supersession a reviewer rejected,
//! retracts exactly the statement edges it caused.

use std::sync::Arc;

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use serde::{Deserialize, Serialize};
use timely::progress::Timestamp;

use super::judge::{Link, LinkKind};
use super::rules::Rules;
use crate::model::{EpistemicType, MemoryObject, Relation, stable_id};

/// The kinds of statement a replacing document retires: what an organisation decides, plans
/// and binds itself to. Evidence, observations and questions of the older document stay what
/// they were.
pub const REPLACEABLE: [EpistemicType; 3] = [
    EpistemicType::Decision,
    EpistemicType::Plan,
    EpistemicType::Constraint,
];

/// One statement of a document on either side of a replacement.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
struct Stated {
    id: String,
    memory_type: EpistemicType,
    start: u32,
    topic: Vec<String>,
    t_valid: Option<i64>,
    recorded_at: Option<i64>,
    /// The document's name as a reader knows it (its title, else its source id).
    document: String,
}

/// Whether a statement takes part: a decision, plan or constraint of the document's text, not
/// a unit of its header block (`Status: Superseded by ADR 004`, `Supersedes: ADR 001`: they say
/// what became of the document, and the document edge has said it).
///
/// ```
/// use epigraph_operators::epistemic::replaced::replaceable;
/// use epigraph_operators::EpistemicType::{Decision, Evidence};
/// assert!(replaceable(Decision, false));
/// assert!(!replaceable(Decision, true));
/// assert!(!replaceable(Evidence, false));
/// ```
pub fn replaceable(memory_type: EpistemicType, header: bool) -> bool {
    REPLACEABLE.contains(&memory_type) && !header
}

/// `SUPERSEDES` links from the statements of a replacing document to those of the document it
/// replaces (see the module docs). `replaced` are the `SUPERSEDES` edges between source nodes
/// (newer → older) the headers drew; `min_shared` is how many topic words a pair shares at least.
pub fn links<'s, T>(
    memories: VecCollection<'s, T, MemoryObject>,
    replaced: VecCollection<'s, T, Relation>,
    rules: Arc<Rules>,
    min_shared: usize,
) -> VecCollection<'s, T, Link>
where
    T: Timestamp + Lattice,
{
    let stated = memories
        .filter(|m| replaceable(m.memory_type, m.header))
        .map(move |m| {
            let node = stable_id(&["source", &m.tenant, &m.source_id]);
            (
                (m.tenant.clone(), node),
                Stated {
                    topic: rules.topic(&m.text),
                    id: m.id,
                    memory_type: m.memory_type,
                    start: m.span.0,
                    t_valid: m.t_valid,
                    recorded_at: m.recorded_at,
                    document: m.title.unwrap_or(m.source_id),
                },
            )
        })
        .filter(|(_, s)| !s.topic.is_empty());
    // (tenant, older node) → (newer node, when the newer document was written).
    let pairs = replaced
        .filter(|r| r.rel_type == "SUPERSEDES")
        .map(|r| ((r.tenant, r.to), (r.from, r.t_valid)))
        .distinct();
    let older = stated
        .clone()
        .join_map(pairs, |(tenant, _), older, (newer, at)| {
            ((tenant.clone(), newer.clone()), (older.clone(), *at))
        });
    older
        .join_map(stated, |(tenant, _), (older, at), newer| {
            let shared = newer
                .topic
                .iter()
                .filter(|w| older.topic.binary_search(w).is_ok())
                .count();
            (
                (tenant.clone(), older.clone(), *at),
                (
                    shared,
                    newer.memory_type == older.memory_type,
                    std::cmp::Reverse(newer.start),
                    newer.clone(),
                ),
            )
        })
        .filter(move |(_, (shared, ..))| *shared >= min_shared.max(1))
        .reduce(|_, input, out| {
            if let Some((best, _)) = input.iter().max_by_key(|(candidate, _)| *candidate) {
                out.push(((*best).clone(), 1));
            }
        })
        .map(|((tenant, older, at), (_, _, _, newer))| {
            let shared: Vec<&str> = newer
                .topic
                .iter()
                .filter(|w| older.topic.binary_search(w).is_ok())
                .map(String::as_str)
                .collect();
            Link {
                kind: LinkKind::Supersedes,
                tenant,
                from: newer.id.clone(),
                to: older.id.clone(),
                t_valid: at.or(newer.t_valid),
                t_invalid: None,
                recorded_at: newer.recorded_at.max(older.recorded_at),
                evidence: vec![format!(
                    "{} replaces {} (its header says so); of {}, the statement sharing most \
                     topic words with this one: {}",
                    newer.document,
                    older.document,
                    newer.document,
                    shared.join(", ")
                )],
            }
        })
}
