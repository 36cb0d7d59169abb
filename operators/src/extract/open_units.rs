//! Statements whose relations wait for names known elsewhere in the tenant: read once with
//! their own source, and again, in the dataflow, when an unknown phrase of theirs turns out to
//! name an entity another source knows.

use std::sync::Arc;

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use serde::{Deserialize, Serialize};
use timely::progress::Timestamp;

use super::mentions::{Evidence, Mention};
use super::relations::RelationReader;
use super::{EXTRACTOR, Extractor, entity_id};
use crate::model::{Provenance, Relation};

/// A statement with a relation cue in which some capitalised phrases name nothing its own
/// source knows. Once the dataflow finds them among the entities known elsewhere in the tenant,
/// its relations are read again with them ("Katherine works on Vortex", where only another
/// source says that Vortex is a project).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct OpenUnit {
    /// `stable_id` of the source, its version and the unit's offset.
    pub id: String,
    /// Tenant.
    pub tenant: String,
    /// Source item id (provenance).
    pub source_id: String,
    /// Source version (provenance).
    pub source_version: String,
    /// When the source was written: the relations' valid time.
    pub occurred_at: Option<i64>,
    /// The unit as it stands in the body.
    pub text: String,
    /// Character offset of the unit in the body.
    pub char_offset: u32,
    /// Confidence of the unit's relations.
    pub confidence: u16,
    /// Its typed mentions: (byte start, byte end in `text`, kind, key, surface).
    pub mentions: Vec<(u32, u32, String, String, String)>,
    /// Its unknown phrases: (byte start, byte end in `text`, key, surface).
    pub open: Vec<(u32, u32, String, String)>,
}

impl OpenUnit {
    /// The relations its text states between its mentions once the open phrases at the given
    /// indices name `(entity id, kind)`; only those touching such a phrase (the others were
    /// read with the source).
    fn relations(&self, reader: &RelationReader, named: &[(u32, String, String)]) -> Vec<Relation> {
        let mention = |start: u32, end: u32, kind: &str, key: &str, surface: &str| Mention {
            start: start as usize,
            end: end as usize,
            surface: surface.to_string(),
            kind: kind.to_string(),
            key: key.to_string(),
            evidence: Evidence::Pattern,
        };
        let mut mentions: Vec<(Mention, String, bool)> = self
            .mentions
            .iter()
            .map(|(start, end, kind, key, surface)| {
                let id = entity_id(&self.tenant, kind, key);
                (mention(*start, *end, kind, key, surface), id, false)
            })
            .collect();
        for (i, id, kind) in named {
            if let Some((start, end, key, surface)) = self.open.get(*i as usize) {
                mentions.push((mention(*start, *end, kind, key, surface), id.clone(), true));
            }
        }
        mentions.sort_by_key(|(m, ..)| (m.start, m.end));
        let (found, ids): (Vec<Mention>, Vec<(String, bool)>) = mentions
            .into_iter()
            .map(|(m, id, named)| (m, (id, named)))
            .unzip();
        let at = |byte: usize| {
            self.char_offset
                + self
                    .text
                    .get(..byte)
                    .map_or(0, |t| t.chars().count() as u32)
        };
        reader
            .read(&self.text, &found)
            .into_iter()
            .filter(|r| ids[r.from].1 || ids[r.to].1)
            .map(|r| {
                let provenance = Provenance {
                    source_id: self.source_id.clone(),
                    source_version: self.source_version.clone(),
                    span: (at(r.span.0), at(r.span.1)),
                    extractor: EXTRACTOR.to_string(),
                    confidence: self.confidence,
                };
                let mut relation = Relation::structural(
                    &self.tenant,
                    &r.rel_type,
                    &ids[r.from].0,
                    &ids[r.to].0,
                    Some(provenance),
                );
                relation.temporal_type = Some(r.temporal);
                relation.t_valid = self.occurred_at;
                relation
            })
            .collect()
    }
}

/// A name known in a tenant: ((tenant, key), (entity id, kind)).
pub(crate) type KnownName = ((String, String), (String, String));

/// What an open unit's relations are read from: the unit, or one of its phrases found among
/// the tenant's entities (its index, the entity id and kind).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
enum OpenPart {
    Unit(OpenUnit),
    Named(u32, String, String),
}

/// The relations of open units whose phrases name entities known elsewhere in the tenant
/// (`named`: (tenant, key) → (entity id, kind)). A phrase naming entities of several kinds
/// takes the first by kind and id.
pub(crate) fn relations_of_open_units<'s, T>(
    units: VecCollection<'s, T, OpenUnit>,
    named: VecCollection<'s, T, KnownName>,
    extractor: Arc<Extractor>,
) -> VecCollection<'s, T, Relation>
where
    T: Timestamp + Lattice,
{
    let asks = units.clone().flat_map(|u| {
        u.open
            .iter()
            .enumerate()
            .map(|(i, (_, _, key, _))| ((u.tenant.clone(), key.clone()), (u.id.clone(), i as u32)))
            .collect::<Vec<_>>()
    });
    let answers = asks.join_map(named, |_, (unit, i), (id, kind)| {
        (unit.clone(), OpenPart::Named(*i, id.clone(), kind.clone()))
    });
    units
        .map(|u| (u.id.clone(), OpenPart::Unit(u)))
        .concat(answers)
        .reduce(move |_unit, parts, output| {
            let mut unit = None;
            let mut named: Vec<(u32, String, String)> = Vec::new();
            for (part, _) in parts {
                match part {
                    OpenPart::Unit(u) => unit = Some(u),
                    OpenPart::Named(i, id, kind) => {
                        if named.last().is_none_or(|(j, ..)| j != i) {
                            named.push((*i, id.clone(), kind.clone()));
                        }
                    }
                }
            }
            let Some(unit) = unit else { return };
            if named.is_empty() {
                return;
            }
            let mut found = unit.relations(extractor.relation_reader(), &named);
            found.sort();
            found.dedup();
            for relation in found {
                output.push((relation, 1));
            }
        })
        .map(|(_, relation)| relation)
}
