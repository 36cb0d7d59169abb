//! Entities as one source sees them: a [`Sighting`] per name it uses, a [`CandidateMention`]
//! per capitalised phrase it leaves untyped, and the aggregation of sightings across sources
//! into one [`EntityNode`] per entity.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::model::{EntityNode, Provenance, stable_id};

/// The id of an entity node.
///
/// ```
/// use epigraph_operators::extract::entity_id;
/// assert_eq!(entity_id("t", "Person", "maya chen"), entity_id("t", "Person", "maya chen"));
/// assert_ne!(entity_id("t", "Person", "atlas"), entity_id("t", "Project", "atlas"));
/// ```
pub fn entity_id(tenant: &str, kind: &str, key: &str) -> String {
    stable_id(&["entity", tenant, kind, key])
}

/// One sighting of an entity in one source: aggregated across sources into an [`EntityNode`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Sighting {
    /// Entity id.
    pub entity_id: String,
    /// Tenant.
    pub tenant: String,
    /// Kind.
    pub kind: String,
    /// Normalised name.
    pub key: String,
    /// Surface form.
    pub surface: String,
    /// Address, for people seen in headers.
    pub address: Option<String>,
    /// Source it was seen in.
    pub source_id: String,
    /// When that source was written.
    pub seen_at: Option<i64>,
    /// Recorded time of that source's version.
    pub recorded_at: Option<i64>,
}

/// An untyped capitalised phrase of a memory object, to match against known entities.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CandidateMention {
    /// Tenant.
    pub tenant: String,
    /// Normalised phrase.
    pub key: String,
    /// The phrase as written.
    pub surface: String,
    /// Memory object it occurs in (the source node for a unit that is noise).
    pub memory_id: String,
    /// Where.
    pub provenance: Provenance,
    /// When the source was written.
    pub seen_at: Option<i64>,
    /// Recorded time of the source version.
    pub recorded_at: Option<i64>,
}

/// One entity node from all its sightings (with their multiplicities): the most used surface
/// form with the most words as its name, every surface as an alias, the earliest times.
pub(crate) fn aggregate_entity(input: &[(&Sighting, isize)]) -> EntityNode {
    let first = input[0].0;
    let mut surfaces: BTreeMap<&str, isize> = BTreeMap::new();
    let mut addresses = BTreeSet::new();
    let mut sources = BTreeSet::new();
    let mut mentions = 0isize;
    let mut t_valid: Option<i64> = None;
    let mut recorded_at: Option<i64> = None;
    let earliest = |a: Option<i64>, b: Option<i64>| match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    for (sighting, count) in input {
        t_valid = earliest(t_valid, sighting.seen_at);
        recorded_at = earliest(recorded_at, sighting.recorded_at);
        *surfaces.entry(sighting.surface.as_str()).or_default() += count;
        if let Some(address) = &sighting.address {
            addresses.insert(address.clone());
        }
        sources.insert(sighting.source_id.as_str());
        mentions += count;
    }
    let name = surfaces
        .iter()
        .max_by(|(a, na), (b, nb)| {
            let words = |s: &str| s.split_whitespace().count();
            (words(a), **na)
                .cmp(&(words(b), **nb))
                .then_with(|| b.cmp(a))
        })
        .map(|(s, _)| s.to_string())
        .unwrap_or_default();
    EntityNode {
        id: first.entity_id.clone(),
        tenant: first.tenant.clone(),
        kind: first.kind.clone(),
        name,
        aliases: surfaces.keys().map(|s| s.to_string()).collect(),
        addresses: addresses.into_iter().collect(),
        mentions: mentions.max(0) as u32,
        sources: sources.len() as u32,
        t_valid,
        recorded_at,
    }
}
