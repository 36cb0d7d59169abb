//! Relations of the closed vocabulary between the mentions of one unit: a `from` mention, a
//! cue, a `to` mention (or the passive order), only where the ontology's signature fits.

use super::cues::CueSet;
use super::mentions::Mention;
use crate::model::TemporalType;
use crate::ontology::{Ontology, OntologyError};

/// A relation read from a unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawRelation {
    /// Index of the start mention.
    pub from: usize,
    /// Index of the end mention.
    pub to: usize,
    /// Neo4j relationship type (`WORKS_ON`).
    pub rel_type: String,
    /// Temporal type of the fact.
    pub temporal: TemporalType,
    /// Byte span from the first to the last character of the statement.
    pub span: (usize, usize),
}

#[derive(Debug)]
struct Compiled {
    rel_type: String,
    from: Vec<String>,
    to: Vec<String>,
    active: CueSet,
    passive: CueSet,
    temporal: TemporalType,
}

/// The relation reader.
#[derive(Debug)]
pub struct RelationReader {
    relations: Vec<Compiled>,
    max_gap: usize,
}

impl RelationReader {
    /// Compiles the vocabulary's cues.
    pub fn new(ontology: &Ontology) -> Result<Self, OntologyError> {
        let relations = ontology
            .relations
            .iter()
            .map(|r| {
                Ok(Compiled {
                    rel_type: r.rel_type(),
                    from: r.from.clone(),
                    to: r.to.clone(),
                    active: CueSet::new(&r.cues).map_err(OntologyError::Invalid)?,
                    passive: CueSet::new(&r.passive_cues).map_err(OntologyError::Invalid)?,
                    temporal: r.temporal,
                })
            })
            .collect::<Result<_, OntologyError>>()?;
        Ok(RelationReader {
            relations,
            max_gap: ontology.max_gap,
        })
    }

    /// Relations between consecutive mentions (sorted by position) of one unit.
    ///
    /// The gap between the two mentions must be short and consist of a cue, possibly with a
    /// few function words around it ("Maya Chen now works on the Atlas project"). The first
    /// relation in the vocabulary whose cue is the longest match wins.
    pub fn read(&self, body: &str, mentions: &[Mention]) -> Vec<RawRelation> {
        let mut out = Vec::new();
        for (i, pair) in mentions.windows(2).enumerate() {
            let (a, b) = (&pair[0], &pair[1]);
            if a.key == b.key || b.start < a.end || b.start - a.end > self.max_gap {
                continue;
            }
            let gap = &body[a.end..b.start];
            if gap.contains(['.', ';', '?', '!', '\n']) && gap.trim() != "." {
                continue;
            }
            let mut best: Option<(usize, usize, usize, &Compiled)> = None;
            for relation in &self.relations {
                let forward = relation.from.contains(&a.kind) && relation.to.contains(&b.kind);
                let backward = relation.from.contains(&b.kind) && relation.to.contains(&a.kind);
                let cue_len = |cues: &CueSet| {
                    cues.find_all(gap)
                        .into_iter()
                        .filter(|m| fills_gap(gap, m.start, m.end))
                        .map(|m| m.end - m.start)
                        .max()
                };
                if forward
                    && let Some(len) = cue_len(&relation.active)
                    && best.is_none_or(|(l, ..)| len > l)
                {
                    best = Some((len, i, i + 1, relation));
                }
                if backward
                    && let Some(len) = cue_len(&relation.passive)
                    && best.is_none_or(|(l, ..)| len > l)
                {
                    best = Some((len, i + 1, i, relation));
                }
            }
            if let Some((_, from, to, relation)) = best {
                out.push(RawRelation {
                    from,
                    to,
                    rel_type: relation.rel_type.clone(),
                    temporal: relation.temporal,
                    span: (a.start, b.end),
                });
            }
        }
        out
    }
}

/// Words that may stand around a cue in the gap between two mentions.
const FILLER: &[&str] = &[
    "the",
    "a",
    "an",
    "now",
    "also",
    "still",
    "currently",
    "has",
    "have",
    "had",
    "will",
    "been",
    "is",
    "was",
    "officially",
    "formally",
    "directly",
    "our",
    "their",
    "his",
    "her",
    "new",
];

/// Whether the gap is the cue plus filler words only.
fn fills_gap(gap: &str, start: usize, end: usize) -> bool {
    let rest = format!("{} {}", &gap[..start], &gap[end..]);
    rest.split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .all(|w| FILLER.contains(&w.to_lowercase().as_str()))
}
