//! Amendments: a person's (or an applied proposal's) correction of one memory object's fields —
//! its type, its text, when it became valid and when it stopped. An amendment replaces what the
//! extractor read before anything is judged, so everything downstream (supersessions, answers,
//! priorities, search) sees the corrected object; withdrawing it (its retraction) restores
//! exactly the extracted one. The object's id, provenance and claims stay those of the source.

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use serde::{Deserialize, Serialize};
use timely::progress::Timestamp;

use crate::model::{EpistemicType, GraphElement, MemoryObject, Standing};

/// A correction of one memory object.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Amendment {
    /// Tenant.
    pub tenant: String,
    /// The memory object's id.
    pub node: String,
    /// Its type.
    pub memory_type: Option<EpistemicType>,
    /// Its text.
    pub text: Option<String>,
    /// Valid from.
    pub valid_from: Option<i64>,
    /// Valid until: from then on it is no longer current (superseded; a question answered).
    pub valid_until: Option<i64>,
}

impl Amendment {
    /// `memory` with the amendment's fields.
    ///
    /// ```
    /// use epigraph_operators::epistemic::amend::Amendment;
    /// use epigraph_operators::{EpistemicType, MemoryObject, Standing, StatementType, TemporalType};
    /// let memory = MemoryObject {
    ///     id: "m".into(), tenant: "t".into(), memory_type: EpistemicType::Narrative,
    ///     statement_type: StatementType::Fact, temporal_type: TemporalType::Dynamic,
    ///     text: "We go with Postgres.".into(), title: None, section: None, outline: vec![], source_id: "s".into(),
    ///     source_version: "v".into(), span: (0, 20), extractor: "x".into(), confidence: 900,
    ///     t_valid: Some(1), t_invalid: None, standing: Standing::Current, recorded_at: None, header: false };
    /// let amendment = Amendment { tenant: "t".into(), node: "m".into(),
    ///     memory_type: Some(EpistemicType::Decision), text: None, valid_from: None,
    ///     valid_until: Some(9) };
    /// let amended = amendment.apply(memory);
    /// assert_eq!(amended.memory_type, EpistemicType::Decision);
    /// assert_eq!((amended.standing, amended.t_invalid), (Standing::Superseded, Some(9)));
    /// assert_eq!(amended.text, "We go with Postgres.", "fields left out keep their value");
    /// ```
    pub fn apply(&self, mut memory: MemoryObject) -> MemoryObject {
        if let Some(t) = self.memory_type {
            memory.memory_type = t;
            if t == EpistemicType::Question && memory.standing == Standing::Current {
                memory.standing = Standing::Open;
            } else if t != EpistemicType::Question && memory.standing == Standing::Open {
                memory.standing = Standing::Current;
            }
        }
        if let Some(text) = &self.text {
            memory.text = text.clone();
        }
        if let Some(from) = self.valid_from {
            memory.t_valid = Some(from);
        }
        if let Some(until) = self.valid_until {
            memory.t_invalid = Some(until);
            memory.standing = if memory.memory_type == EpistemicType::Question {
                Standing::Answered
            } else {
                Standing::Superseded
            };
        }
        memory
    }
}

/// `elements` with every memory object an amendment names amended (the amendment of its own
/// tenant); everything else passes through.
pub fn amended<'s, T>(
    elements: VecCollection<'s, T, GraphElement>,
    amendments: VecCollection<'s, T, Amendment>,
) -> VecCollection<'s, T, GraphElement>
where
    T: Timestamp + Lattice,
{
    let keyed = amendments.map(|a| ((a.tenant.clone(), a.node.clone()), a));
    let memories = elements.clone().flat_map(|e| match e {
        GraphElement::Memory(m) => Some(((m.tenant.clone(), m.id.clone()), m)),
        _ => None,
    });
    let rest = elements.filter(|e| !matches!(e, GraphElement::Memory(_)));
    let changed = memories.clone().join_map(keyed.clone(), |_, m, a| {
        GraphElement::Memory(a.apply(m.clone()))
    });
    let untouched = memories
        .antijoin(keyed.map(|(k, _)| k).distinct())
        .map(|(_, m)| GraphElement::Memory(m));
    rest.concat(changed).concat(untouched)
}
