//! Identity resolution: which entity nodes are the same real thing, as an overlay.
//!
//! Evidence that two entities of one tenant and one kind are the same (never across kinds):
//! - **person directory**: the same e-mail address or chat id in the sightings of both;
//! - **names**: within a block of people sharing a last name, first names that are an initial,
//!   a prefix (≥ 3 letters: Fred, Frederick) or a typo (Jaro-Winkler ≥ 0.97) of each other — an
//!   initial only when it fits one person of the block (Patricia and Patrick Mazur stay apart); a lone first name when exactly one person of the
//!   tenant has it; other kinds: near spellings (Jaro-Winkler ≥ 0.95) within a block of the
//!   first three letters;
//! - **stated aliases** ([`AliasLink`]): "Jasminder Singh (Jas)", "a.k.a.", and the
//!   `[[alias]]` groups of the ontology;
//! - **human verdicts** ([`Verdict`]): `same` adds evidence, `distinct` removes the evidence
//!   between the two; withdrawing a verdict is retracting its record, which restores the
//!   previous result exactly.
//!
//! Components over the evidence are computed with `iterate` (label propagation, the smallest id
//! wins), so the canonical id is deterministic. Nothing is merged destructively: each member
//! gets a `SAME_AS` edge to its canonical entity and keeps its own node, aliases and mentions.
//! The edge carries its evidence in words (`Relation::evidence`, at most [`MAX_EVIDENCE`]):
//! each reason that links the member to another entity of the component, naming that entity.

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use differential_dataflow::operators::Iterate;
use serde::{Deserialize, Serialize};
use timely::progress::Timestamp;

use crate::extract::Sighting;
use crate::extract::aliases::AliasLink;
use crate::model::{GraphElement, Relation};

/// The relationship type from a member to its canonical entity.
pub const SAME_AS: &str = "SAME_AS";

/// A human verdict on two entities (from the feedback topic). Withdrawing it retracts it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Verdict {
    /// Tenant.
    pub tenant: String,
    /// One entity id.
    pub a: String,
    /// The other.
    pub b: String,
    /// `true`: the same; `false`: distinct (a hard separator between the two).
    pub same: bool,
}

/// The entity an id stands for, as evidence rules see it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
struct Named {
    tenant: String,
    kind: String,
    key: String,
    id: String,
}

/// Evidence pairs `(a, b)` with `a < b` from one block of entities of one tenant and kind.
///
/// ```
/// use epigraph_operators::resolve::block_pairs;
/// assert_eq!(block_pairs("Person", &["jasminder singh", "j. singh"]), [(0, 1)]);
/// assert_eq!(block_pairs("Person", &["jasminder singh", "jas singh"]), [(0, 1)]);
/// assert!(block_pairs("Person", &["tom berg", "tina berg", "t. berg"]).iter().all(|(_, b)| *b != 2));
/// assert!(block_pairs("Person", &["patricia mazur", "patrick mazur"]).is_empty());
/// ```
pub fn block_pairs(kind: &str, keys: &[&str]) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    if kind != "Person" {
        for i in 0..keys.len() {
            for j in i + 1..keys.len() {
                if strsim::jaro_winkler(keys[i], keys[j]) >= 0.95 {
                    pairs.push((i, j));
                }
            }
        }
        return pairs;
    }
    let first = |k: &str| k.split_whitespace().next().unwrap_or("").to_string();
    let is_initial = |f: &str| f.trim_end_matches('.').chars().count() == 1;
    for i in 0..keys.len() {
        for j in i + 1..keys.len() {
            let (a, b) = (first(keys[i]), first(keys[j]));
            let (ia, ib) = (is_initial(&a), is_initial(&b));
            let compatible = if ia || ib {
                if ia && ib {
                    false
                } else {
                    let (initial, full, initial_at) = if ia { (&a, &b, i) } else { (&b, &a, j) };
                    let letter = initial.chars().next().unwrap_or(' ');
                    // Only when the initial fits exactly one full first name of the block.
                    let fitting = (0..keys.len())
                        .filter(|k| *k != initial_at)
                        .map(|k| first(keys[k]))
                        .filter(|f| !is_initial(f) && f.starts_with(letter))
                        .collect::<std::collections::BTreeSet<_>>();
                    full.starts_with(letter) && fitting.len() == 1
                }
            } else {
                let (short, long) = if a.len() <= b.len() {
                    (&a, &b)
                } else {
                    (&b, &a)
                };
                (short.chars().count() >= 3 && long.starts_with(short.as_str()))
                    || strsim::jaro_winkler(&a, &b) >= 0.97
            };
            if compatible {
                pairs.push((i, j));
            }
        }
    }
    pairs
}

/// `SAME_AS` edges (member → canonical entity) for the entities of `sightings`, given the
/// human `verdicts` and the `aliases` stated in text or configuration (links to entities that
/// were never seen are ignored).
///
/// ```
/// use differential_dataflow::input::Input;
/// use epigraph_operators::{GraphElement, extract::{Sighting, aliases::AliasLink, entity_id}, resolve::{Verdict, resolve_identities}};
/// use timely::dataflow::operators::capture::{Capture, Extract};
///
/// let seen = |name: &str, address: Option<&str>| Sighting {
///     entity_id: entity_id("t", "Person", name), tenant: "t".into(), kind: "Person".into(),
///     key: name.into(), surface: name.into(), address: address.map(str::to_string), source_id: "s".into(),
///     seen_at: None, recorded_at: None };
/// let sightings = vec![seen("maya chen", Some("maya@x")), seen("m. chen", Some("maya@x")), seen("tom berg", None)];
/// let captured = timely::example(move |scope| {
///     let sightings = scope.new_collection_from(sightings).1;
///     let verdicts = scope.new_collection_from(Vec::<Verdict>::new()).1;
///     let aliases = scope.new_collection_from(Vec::<AliasLink>::new()).1;
///     resolve_identities(sightings, verdicts, aliases).inner.capture()
/// });
/// let edges: Vec<_> = captured.extract().into_iter().flat_map(|(_, v)| v).collect();
/// assert_eq!(edges.len(), 1, "one SAME_AS edge joins the two spellings of Maya");
/// ```
pub fn resolve_identities<'s, T>(
    sightings: VecCollection<'s, T, Sighting>,
    verdicts: VecCollection<'s, T, Verdict>,
    aliases: VecCollection<'s, T, AliasLink>,
) -> VecCollection<'s, T, GraphElement>
where
    T: Timestamp + Lattice + Ord,
{
    let entities = sightings
        .clone()
        .map(|s| Named {
            tenant: s.tenant,
            kind: s.kind,
            key: s.key,
            id: s.entity_id,
        })
        .distinct();
    // Person directory: entities sharing an address.
    let by_address = sightings
        .filter(|s| s.address.is_some() && s.kind == "Person")
        .map(|s| {
            (
                (s.tenant.clone(), s.address.clone().unwrap_or_default()),
                s.entity_id,
            )
        })
        .distinct();
    let address_pairs = by_address
        .clone()
        .join_map(by_address, |(_, address), a, b| {
            ((a.clone(), b.clone()), format!("same address {address}"))
        })
        .filter(|((a, b), _)| a < b);
    // Name blocks: people by last name and by first name, other kinds by prefix.
    let blocks = entities
        .clone()
        .flat_map(|e| {
            let tokens: Vec<&str> = e.key.split_whitespace().collect();
            let mut keys = Vec::new();
            if e.kind == "Person" {
                if tokens.len() >= 2 {
                    keys.push(format!("last:{}", tokens[tokens.len() - 1]));
                    keys.push(format!("first:{}", tokens[0]));
                } else if let Some(only) = tokens.first() {
                    keys.push(format!("first:{only}"));
                }
            } else {
                keys.push(format!(
                    "prefix:{}",
                    e.key.chars().take(3).collect::<String>()
                ));
            }
            keys.into_iter()
                .map(|block| {
                    (
                        (e.tenant.clone(), e.kind.clone(), block),
                        (e.key.clone(), e.id.clone()),
                    )
                })
                .collect::<Vec<_>>()
        })
        .reduce(|(_, kind, block), members, out| {
            let keys: Vec<&str> = members.iter().map(|((k, _), _)| k.as_str()).collect();
            let ids: Vec<&String> = members.iter().map(|((_, id), _)| id).collect();
            if block.starts_with("first:") {
                // A lone first name joins the only full name that starts with it.
                let full: Vec<usize> = (0..keys.len()).filter(|i| keys[*i].contains(' ')).collect();
                if let [only] = full.as_slice() {
                    for i in (0..keys.len()).filter(|i| !keys[*i].contains(' ')) {
                        let why = format!("the only {:?} of the tenant", keys[*only]);
                        out.push(((ordered(ids[i], ids[*only]), why), 1));
                    }
                }
            } else if members.len() <= 200 {
                for (i, j) in block_pairs(kind, &keys) {
                    let why = format!("names {:?} and {:?}", keys[i], keys[j]);
                    out.push(((ordered(ids[i], ids[j]), why), 1));
                }
            }
        })
        .map(|(_, evidence)| evidence);
    let same_verdicts = verdicts
        .clone()
        .filter(|v| v.same)
        .map(|v| (ordered(&v.a, &v.b), "a reviewer said the same".to_string()));
    // Stated aliases between entities that exist.
    let seen = entities.clone().map(|e| e.id).distinct();
    let stated = aliases
        .filter(|l| l.a != l.b)
        .map(|l| (l.a, l.b))
        .semijoin(seen.clone())
        .map(|(a, b)| (b, a))
        .semijoin(seen)
        .map(|(b, a)| (ordered(&a, &b), "a stated alias".to_string()));
    let distinct_pairs = verdicts
        .filter(|v| !v.same)
        .map(|v| (ordered(&v.a, &v.b), ()))
        .distinct();
    // Every reason two entities are linked, minus the pairs a reviewer said are distinct.
    let reasons = address_pairs
        .concat(blocks)
        .concat(same_verdicts)
        .concat(stated)
        .distinct()
        .antijoin(distinct_pairs.map(|(pair, ())| pair));
    let evidence = reasons.clone().map(|(pair, _)| pair).distinct();
    let edges = evidence.clone().concat(evidence.map(|(a, b)| (b, a)));
    // What links each entity to the others of its component, in words, naming the other.
    let names = entities.clone().map(|e| (e.id, e.key));
    let said = reasons
        .flat_map(|((a, b), why)| [(b.clone(), (a.clone(), why.clone())), (a, (b, why))])
        .join_map(names, |_other, (node, why), other_name| {
            (node.clone(), format!("{why} — {other_name}"))
        })
        .reduce(|_node, whys, out| {
            let mut all: Vec<String> = whys.iter().map(|(w, _)| (*w).clone()).collect();
            all.truncate(MAX_EVIDENCE);
            out.push((all, 1))
        });
    let nodes = entities.clone().map(|e| (e.id.clone(), e.id));
    let labels = nodes.clone().iterate(|scope, inner| {
        let edges = edges.enter(scope);
        let nodes = nodes.enter(scope);
        inner
            .join_map(edges, |_node, label, neighbour| {
                (neighbour.clone(), label.clone())
            })
            .concat(nodes)
            .reduce(|_node, labels, out| out.push((labels[0].0.clone(), 1)))
    });
    labels
        .filter(|(node, label)| node != label)
        .join_map(entities.map(|e| (e.id, e.tenant)), |node, label, tenant| {
            (node.clone(), (label.clone(), tenant.clone()))
        })
        .join_map(said, |node, (label, tenant), evidence| {
            let mut edge = Relation::structural(tenant, SAME_AS, node, label, None);
            edge.evidence = evidence.clone();
            GraphElement::Relation(edge)
        })
}

/// At most this many reasons are written on one `SAME_AS` edge.
pub const MAX_EVIDENCE: usize = 8;

fn ordered(a: &str, b: &str) -> (String, String) {
    if a <= b {
        (a.to_string(), b.to_string())
    } else {
        (b.to_string(), a.to_string())
    }
}

#[cfg(test)]
mod tests;
