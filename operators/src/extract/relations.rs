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
                    active: CueSet::new(&r.cues)
                        .map_err(|e| OntologyError::Invalid(e.to_string()))?,
                    passive: CueSet::new(&r.passive_cues)
                        .map_err(|e| OntologyError::Invalid(e.to_string()))?,
                    temporal: r.temporal,
                })
            })
            .collect::<Result<_, OntologyError>>()?;
        Ok(RelationReader {
            relations,
            max_gap: ontology.max_gap,
        })
    }

    /// Whether a relation could join two of `spans` (byte ranges of `body`: mentions and
    /// phrases that may name entities known elsewhere): two consecutive spans at most
    /// `max_gap` apart, no sentence break between them, and a cue of the vocabulary in the
    /// gap. [`RelationReader::read`] needs all of this and more (the kinds must fit a
    /// signature), so a unit for which this is false yields no relation, whatever its phrases
    /// turn out to name.
    ///
    /// ```
    /// use epigraph_operators::{Ontology, extract::relations::RelationReader};
    /// let reader = RelationReader::new(&Ontology::bundled()).unwrap();
    /// let text = "Katherine works on Vortex, says the weekly report.";
    /// assert!(reader.could_relate(text, &[(0, 9), (19, 25)]));
    /// // "says the weekly" holds no cue; "on" alone far from any span does not count.
    /// assert!(!reader.could_relate(text, &[(19, 25), (36, 49)]));
    /// ```
    pub fn could_relate(&self, body: &str, spans: &[(usize, usize)]) -> bool {
        let mut spans = spans.to_vec();
        spans.sort_unstable();
        spans.windows(2).any(|pair| {
            let ((_, a_end), (b_start, _)) = (pair[0], pair[1]);
            if b_start < a_end || b_start - a_end > self.max_gap {
                return false;
            }
            let gap = &body[a_end..b_start];
            if gap.contains(['.', ';', '?', '!', '\n']) && gap.trim() != "." {
                return false;
            }
            self.relations
                .iter()
                .any(|r| r.active.any(gap) || r.passive.any(gap))
        })
    }

    /// Relations between consecutive mentions (sorted by position) of one unit.
    ///
    /// The gap between the two mentions must be short and consist of a cue, possibly with a
    /// few function words around it ("Maya Chen now works on the Atlas project"). The first
    /// relation in the vocabulary whose cue is the longest match wins. Mentions of one kind
    /// joined by `,`, `and`, `, and` or `&` are one coordinated side, and the relation holds
    /// for each of them: "Maya Chen and Tom Park work on Atlas and Borealis" gives four.
    ///
    /// ```
    /// use epigraph_operators::{SourceVersion, extract::Extractor};
    /// use epigraph_schemas::SourceKind;
    /// let doc = SourceVersion::new("acme", "team.md", SourceKind::Document,
    ///     "Maya Chen and Tom Park work on the Atlas project and the Borealis project.");
    /// let extraction = Extractor::bundled().extract(&doc);
    /// let mut edges: Vec<(&str, &str, &str)> = extraction.entity_relations.iter()
    ///     .map(|r| (r.rel_type.as_str(), r.from.as_str(), r.to.as_str())).collect();
    /// edges.sort();
    /// edges.dedup();
    /// assert_eq!(edges.len(), 4, "{edges:?}");
    /// assert!(edges.iter().all(|(t, ..)| *t == "WORKS_ON"));
    /// ```
    pub fn read(&self, body: &str, mentions: &[Mention]) -> Vec<RawRelation> {
        let groups = coordinated(body, mentions);
        let mut out = Vec::new();
        for pair in groups.windows(2) {
            let (left, right) = (&pair[0], &pair[1]);
            let (i, j) = (left[left.len() - 1], right[0]);
            let (a, b) = (&mentions[i], &mentions[j]);
            if a.key == b.key || b.start < a.end || b.start - a.end > self.max_gap {
                continue;
            }
            let gap = &body[a.end..b.start];
            if gap.contains(['.', ';', '?', '!', '\n']) && gap.trim() != "." {
                continue;
            }
            let mut best: Option<(usize, bool, &Compiled)> = None;
            for relation in &self.relations {
                let forward = relation.from.contains(&a.kind) && relation.to.contains(&b.kind);
                let backward = relation.from.contains(&b.kind) && relation.to.contains(&a.kind);
                let cue_len = |cues: &CueSet| {
                    cues.find_all(gap)
                        .into_iter()
                        .filter(|m| fills_gap(gap, m.start, m.end, &a.kind))
                        .map(|m| m.end - m.start)
                        .max()
                };
                if forward
                    && let Some(len) = cue_len(&relation.active)
                    && best.is_none_or(|(l, ..)| len > l)
                {
                    best = Some((len, true, relation));
                }
                if backward
                    && let Some(len) = cue_len(&relation.passive)
                    && best.is_none_or(|(l, ..)| len > l)
                {
                    best = Some((len, false, relation));
                }
            }
            let Some((_, forward, relation)) = best else {
                continue;
            };
            let (sources, targets) = if forward {
                (left, right)
            } else {
                (right, left)
            };
            for &from in sources.iter() {
                for &to in targets.iter() {
                    if mentions[from].key == mentions[to].key {
                        continue;
                    }
                    let (x, y) = (&mentions[from], &mentions[to]);
                    out.push(RawRelation {
                        from,
                        to,
                        rel_type: relation.rel_type.clone(),
                        temporal: relation.temporal,
                        span: (x.start.min(y.start), x.end.max(y.end)),
                    });
                }
            }
        }
        out
    }
}

/// The mentions in runs of one kind joined by a conjunction (`,`, `and`, `, and`, `&`): each
/// run is one coordinated side of a relation. Indices into `mentions`, in order.
fn coordinated(body: &str, mentions: &[Mention]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, m) in mentions.iter().enumerate() {
        if let Some(group) = groups.last_mut() {
            let last = &mentions[group[group.len() - 1]];
            let joined = last.kind == m.kind
                && m.start >= last.end
                && conjunction(&body[last.end..m.start], &m.kind);
            if joined {
                group.push(i);
                continue;
            }
        }
        groups.push(vec![i]);
    }
    groups
}

/// Whether the text between two mentions of `kind` only joins them: `,`, `and`, `, and` or
/// `&`, with articles and the kind's own noun around it ("the Atlas project and the Borealis
/// project").
fn conjunction(gap: &str, kind: &str) -> bool {
    let kind = kind.to_ascii_lowercase();
    let plural = format!("{kind}s");
    let words: Vec<String> = gap
        .replace(',', " , ")
        .split_whitespace()
        .map(str::to_ascii_lowercase)
        .filter(|w| !matches!(w.as_str(), "the" | "a" | "an" | "our" | "their" | "its"))
        .filter(|w| *w != kind && *w != plural)
        .collect();
    matches!(
        words.iter().map(String::as_str).collect::<Vec<_>>()[..],
        [","] | ["and"] | [",", "and"] | ["&"]
    )
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
    "are",
    "was",
    "were",
    "officially",
    "formally",
    "directly",
    "our",
    "their",
    "his",
    "her",
    "new",
];

/// Whether the gap is the cue plus filler words only; the noun of the first mention's kind
/// counts as filler ("the Atlas project is managed by").
fn fills_gap(gap: &str, start: usize, end: usize, kind: &str) -> bool {
    let kind = kind.to_lowercase();
    let rest = format!("{} {}", &gap[..start], &gap[end..]);
    rest.split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .all(|w| FILLER.contains(&w.as_str()) || w == kind || w == format!("{kind}s"))
}
