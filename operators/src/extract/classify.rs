//! Typing a unit into one of the nine epistemic types, with its statement and temporal type,
//! from the cues and sections of the ontology.

use epigraph_schemas::SourceKind;

use super::cues::CueSet;
use crate::model::{EpistemicType, StatementType, TemporalType};
use crate::ontology::{Ontology, OntologyError};

/// The typing of one unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Typing {
    /// Epistemic type.
    pub memory_type: EpistemicType,
    /// Fact, opinion or prediction.
    pub statement_type: StatementType,
    /// Static, dynamic or atemporal.
    pub temporal_type: TemporalType,
    /// Winning score (0: no cue, the kind's default type).
    pub score: u32,
}

#[derive(Debug)]
struct TypeCues {
    memory_type: EpistemicType,
    strong: CueSet,
    weak: CueSet,
    sections: CueSet,
    temporal_type: TemporalType,
}

/// The unit classifier.
#[derive(Debug)]
pub struct Classifier {
    types: Vec<TypeCues>,
    opinion: CueSet,
    prediction: CueSet,
    noise: Vec<String>,
    noise_patterns: Vec<regex::Regex>,
    min_words: usize,
    strong_weight: u32,
    weak_weight: u32,
    section_weight: u32,
    defaults: [(SourceKind, EpistemicType); 4],
}

impl Classifier {
    /// Compiles the ontology's cues.
    pub fn new(ontology: &Ontology) -> Result<Self, OntologyError> {
        let compile =
            |cues: &[String]| CueSet::new(cues).map_err(|e| OntologyError::Invalid(e.to_string()));
        let types = ontology
            .types
            .iter()
            .map(|spec| {
                Ok(TypeCues {
                    memory_type: spec.memory_type,
                    strong: compile(&spec.strong)?,
                    weak: compile(&spec.weak)?,
                    sections: compile(&spec.sections)?,
                    temporal_type: spec.temporal_type,
                })
            })
            .collect::<Result<Vec<_>, OntologyError>>()?;
        let kinds = [
            SourceKind::Chat,
            SourceKind::Email,
            SourceKind::Calendar,
            SourceKind::Document,
        ];
        Ok(Classifier {
            types,
            opinion: compile(&ontology.statement.opinion)?,
            prediction: compile(&ontology.statement.prediction)?,
            noise: ontology
                .scoring
                .noise
                .iter()
                .map(|n| n.to_lowercase())
                .collect(),
            noise_patterns: ontology
                .scoring
                .noise_patterns
                .iter()
                .map(|p| {
                    regex::RegexBuilder::new(p)
                        .case_insensitive(true)
                        .build()
                        .map_err(|e| OntologyError::Invalid(format!("noise pattern {p:?}: {e}")))
                })
                .collect::<Result<_, _>>()?,
            min_words: ontology.scoring.min_words,
            strong_weight: ontology.scoring.strong_weight,
            weak_weight: ontology.scoring.weak_weight,
            section_weight: ontology.scoring.section_weight,
            defaults: kinds.map(|k| (k, ontology.default_type(k))),
        })
    }

    /// The typing of a unit, or `None` when it is noise (greetings, thanks, fragments).
    ///
    /// ```
    /// use epigraph_operators::{EpistemicType, Ontology, extract::classify::Classifier};
    /// use epigraph_schemas::SourceKind;
    /// let classifier = Classifier::new(&Ontology::bundled()).unwrap();
    /// let type_of = |text: &str| classifier.classify(text, None, SourceKind::Document).map(|t| t.memory_type);
    /// assert_eq!(type_of("We decided to ship Atlas on June 3."), Some(EpistemicType::Decision));
    /// assert_eq!(type_of("Who owns the billing migration?"), Some(EpistemicType::Question));
    /// assert_eq!(type_of("thanks!"), None);
    /// // A placeholder is no statement, even under "Open questions" and though "TBD" is a cue.
    /// let under = |text: &str| classifier.classify(text, Some("Open questions"), SourceKind::Document);
    /// assert!(under("TBD.").is_none());
    /// assert_eq!(under("TBD: owner for the AquaNest renewal.").map(|t| t.memory_type), Some(EpistemicType::Question));
    /// // Licence and attribution lines are boilerplate, not narrative.
    /// assert_eq!(type_of("Written for epigraph; public domain."), None);
    /// assert_eq!(type_of("Copyright 2026 Northwind Labs. All rights reserved."), None);
    /// assert_eq!(type_of("This file is licensed under the Apache License, Version 2.0."), None);
    /// assert!(type_of("We will put the survey data in the public domain after the launch.").is_some());
    /// // An entry of a document's list that names an identifier is a statement, however short.
    /// assert!(under("``axes.hold``").is_some());
    /// assert!(classifier.classify("`ok`", None, SourceKind::Chat).is_none());
    /// ```
    pub fn classify(&self, text: &str, section: Option<&str>, kind: SourceKind) -> Option<Typing> {
        self.classify_scored(text, section, kind)
            .map(|(typing, _)| typing)
    }

    /// [`Classifier::classify`] and the rule score of each type (as [`Classifier::type_scores`]
    /// gives them), from one pass of the cues.
    pub fn classify_scored(
        &self,
        text: &str,
        section: Option<&str>,
        kind: SourceKind,
    ) -> Option<(Typing, [u32; 9])> {
        if self.noise_patterns.iter().any(|p| p.is_match(text)) || self.is_placeholder(text) {
            return None;
        }
        let (scores, strong_total) = self.score_types(text, section);
        let mut best: Option<(u32, usize)> = None;
        for (i, score) in scores.iter().enumerate() {
            if *score > 0 && best.is_none_or(|(b, _)| *score > b) {
                best = Some((*score, i));
            }
        }
        if strong_total == 0 && self.is_noise(text) && !is_named_entry(text, section, kind) {
            return None;
        }
        let (score, memory_type, temporal_type) = match best {
            Some((score, i)) => (
                score,
                self.types[i].memory_type,
                self.types[i].temporal_type,
            ),
            None => {
                let memory_type = self
                    .defaults
                    .iter()
                    .find(|(k, _)| *k == kind)
                    .map_or(EpistemicType::Narrative, |(_, t)| *t);
                (0, memory_type, self.temporal_type(memory_type))
            }
        };
        let typing = Typing {
            memory_type,
            statement_type: self.statement_type(memory_type, text),
            temporal_type,
            score,
        };
        Some((typing, self.in_table_order(&scores)))
    }

    /// The rule score of each type for a unit, in [`EpistemicType::ALL`] order (what
    /// [`Classifier::classify`] takes the best of; noise is not judged here).
    ///
    /// ```
    /// use epigraph_operators::{EpistemicType, Ontology, extract::classify::Classifier};
    /// let classifier = Classifier::new(&Ontology::bundled()).unwrap();
    /// let scores = classifier.type_scores("Who owns the billing migration?", None);
    /// let question = EpistemicType::ALL.iter().position(|t| *t == EpistemicType::Question).unwrap();
    /// assert!(scores[question] > 0);
    /// assert_eq!(scores.iter().max(), Some(&scores[question]));
    /// ```
    pub fn type_scores(&self, text: &str, section: Option<&str>) -> [u32; 9] {
        self.in_table_order(&self.score_types(text, section).0)
    }

    /// Scores listed in the ontology's order of types, rearranged in [`EpistemicType::ALL`] order.
    fn in_table_order(&self, scores: &[u32]) -> [u32; 9] {
        let mut out = [0; 9];
        for (cues, score) in self.types.iter().zip(scores) {
            if let Some(i) = EpistemicType::ALL
                .iter()
                .position(|t| *t == cues.memory_type)
            {
                out[i] = *score;
            }
        }
        out
    }

    /// The default temporal type of an epistemic type.
    pub fn temporal_type(&self, memory_type: EpistemicType) -> TemporalType {
        self.types
            .iter()
            .find(|t| t.memory_type == memory_type)
            .map_or(TemporalType::Static, |t| t.temporal_type)
    }

    /// The statement type of a unit of the given type: EVALUATION → opinion, PLAN → prediction,
    /// else the opinion and prediction cues, else fact.
    pub fn statement_type(&self, memory_type: EpistemicType, text: &str) -> StatementType {
        match memory_type {
            EpistemicType::Evaluation => StatementType::Opinion,
            EpistemicType::Plan => StatementType::Prediction,
            _ if self.opinion.any(text) => StatementType::Opinion,
            _ if self.prediction.any(text) => StatementType::Prediction,
            _ => StatementType::Fact,
        }
    }

    /// Per type of the ontology (in its order): the score; and the number of strong cues seen.
    fn score_types(&self, text: &str, section: Option<&str>) -> (Vec<u32>, u32) {
        let section = section.map(str::to_lowercase);
        let mut strong_total = 0;
        // Cues inside a leading subordinate clause ("Once a PEP has been accepted, …") count
        // as weak: the main clause carries the unit's role.
        let lead = subordinate_lead(text);
        // … and so do cues inside a parenthetical aside.
        let asides = parentheticals(text);
        let mut scores = Vec::with_capacity(self.types.len());
        for cues in &self.types {
            let (mut strong, mut weak) = (0u32, 0u32);
            let mut seen = Vec::new();
            for m in cues.strong.find_all(text) {
                if !seen.contains(&m.cue) {
                    seen.push(m.cue);
                    // A cue weighted `+N` counts as N cues.
                    let n = cues.strong.weight(m.cue);
                    if m.end <= lead || inside(&asides, m.start, m.end) {
                        weak += n
                    } else {
                        strong += n
                    }
                }
            }
            weak += cues.weak.weighted(text);
            // The heaviest matching section cue counts once.
            let section_hits = section.as_deref().map_or(0, |s| {
                let hits = cues.sections.distinct(s);
                hits.iter()
                    .map(|c| cues.sections.weight(*c))
                    .max()
                    .unwrap_or(0)
            });
            strong_total += strong;
            scores.push(
                strong * self.strong_weight
                    + weak * self.weak_weight
                    + section_hits * self.section_weight,
            );
        }
        (scores, strong_total)
    }

    /// Whether a unit is nothing but one of the `noise` phrases ("TBD.", "N/A", "thanks!"):
    /// a placeholder is no statement, even where its word is a cue ("TBD: owner for the
    /// renewal" is a question; "TBD." after one is not another).
    fn is_placeholder(&self, text: &str) -> bool {
        self.noise.contains(&bare(text))
    }

    /// Whether a unit without strong cues is noise: empty, or a fragment under `min_words`
    /// that is no header line. (The noise patterns and placeholders are checked before, for
    /// every unit.)
    fn is_noise(&self, text: &str) -> bool {
        let bare = bare(text);
        let header_line = text
            .split_once(": ")
            .is_some_and(|(key, value)| is_header_key(key) && !value.trim().is_empty());
        bare.is_empty() || (bare.split(' ').count() < self.min_words && !header_line)
    }

    /// Confidence of a typing from a source of the given authority, in thousandths.
    pub fn confidence(&self, typing: &Typing, authority: f64) -> u16 {
        let strength = if typing.score == 0 {
            0.5
        } else {
            (0.55 + 0.15 * f64::from(typing.score) / f64::from(self.strong_weight.max(1))).min(1.0)
        };
        (authority * strength * 1000.0).round().clamp(0.0, 1000.0) as u16
    }
}

/// An identifier in a code span, opening a unit (after a role: ``:rc:`axes.hold` ``); not a
/// link (`` `OrderedDict patch <https://…>`_ ``).
static OPENING_CODE_SPAN: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"^\s*(?::[\w:]+:)?`{1,2}[^`\s<>]+`{1,2}(?:[^_`]|$)")
        .expect("the opening code span pattern compiles")
});

/// Whether a short unit is an entry of a document's list of identifiers (release notes' "-
/// ``axes.hold``" under "Removed"): it opens with a code span and sits under a heading, so it says
/// something of what it names even in one word.
pub(crate) fn is_named_entry(text: &str, section: Option<&str>, kind: SourceKind) -> bool {
    kind == SourceKind::Document && section.is_some() && OPENING_CODE_SPAN.is_match(text)
}

/// A unit's words, lower-cased and single-spaced, without punctuation (`+` and `'` kept).
fn bare(text: &str) -> String {
    let kept: String = text
        .chars()
        .filter(|c| c.is_alphanumeric() || c.is_whitespace() || *c == '+' || *c == '\'')
        .collect::<String>()
        .to_lowercase();
    kept.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Words that open a subordinate clause.
const SUBORDINATORS: [&str; 14] = [
    "once",
    "when",
    "if",
    "after",
    "before",
    "although",
    "though",
    "while",
    "since",
    "because",
    "unless",
    "until",
    "whereas",
    "as soon as",
];

/// Byte length of a leading subordinate clause ending in a comma, or 0.
///
/// ```
/// use epigraph_operators::extract::classify::subordinate_lead;
/// assert_eq!(subordinate_lead("Once it is accepted, it must ship."), 20);
/// assert_eq!(subordinate_lead("It must ship, once accepted."), 0);
/// ```
pub fn subordinate_lead(text: &str) -> usize {
    let lower = text.trim_start().to_lowercase();
    let opens = SUBORDINATORS
        .iter()
        .any(|s| lower.starts_with(s) && lower[s.len()..].starts_with(' '));
    match (opens, text.find(',')) {
        (true, Some(comma)) => comma + 1,
        _ => 0,
    }
}

/// Byte spans of the parenthetical asides of a text: `(…)` at any depth, outermost only. An
/// unclosed parenthesis opens no aside.
///
/// ```
/// use epigraph_operators::extract::classify::parentheticals;
/// assert_eq!(parentheticals("It works (which will change) now."), vec![(9, 28)]);
/// assert!(parentheticals("a) first item").is_empty());
/// ```
pub fn parentheticals(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut open: Option<usize> = None;
    let mut depth = 0usize;
    for (at, c) in text.char_indices() {
        match c {
            '(' => {
                if depth == 0 {
                    open = Some(at);
                }
                depth += 1;
            }
            ')' if depth > 0 => {
                depth -= 1;
                if depth == 0
                    && let Some(start) = open.take()
                {
                    out.push((start, at + 1));
                }
            }
            _ => {}
        }
    }
    out
}

fn inside(spans: &[(usize, usize)], start: usize, end: usize) -> bool {
    spans.iter().any(|(s, e)| *s <= start && end <= *e)
}

/// `Status`, `Superseded-By`: a capitalised key of letters and hyphens.
fn is_header_key(key: &str) -> bool {
    key.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && key.len() <= 30
        && key.chars().all(|c| c.is_ascii_alphabetic() || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn type_of(text: &str, section: Option<&str>, kind: SourceKind) -> Option<EpistemicType> {
        let classifier = Classifier::new(&Ontology::bundled()).unwrap();
        classifier
            .classify(text, section, kind)
            .map(|t| t.memory_type)
    }

    #[test]
    fn a_weighted_cue_counts_as_several() {
        // `+2` on the trailing question mark: it outweighs one strong cue of another type.
        assert_eq!(
            type_of("Had a chance to read the papers?", None, SourceKind::Chat),
            Some(EpistemicType::Question)
        );
    }

    #[test]
    fn a_leading_stance_phrase_sets_the_role() {
        let doc = |text: &str| type_of(text, None, SourceKind::Document);
        assert_eq!(
            doc("Arguably they should all use the same exception."),
            Some(EpistemicType::Evaluation)
        );
        assert_eq!(
            doc("We expect that these issues will be resolved over time."),
            Some(EpistemicType::Hypothesis)
        );
        assert_eq!(
            doc("This would break code that relies on the old order."),
            Some(EpistemicType::Hypothesis)
        );
    }

    #[test]
    fn cues_inside_an_aside_count_as_weak() {
        // Without the parenthesis, "benchmarks" (evidence) would tie "worked well" and win.
        assert_eq!(
            type_of(
                "The approach worked well (see the benchmarks).",
                None,
                SourceKind::Document
            ),
            Some(EpistemicType::Evaluation)
        );
    }

    #[test]
    fn greetings_and_sign_offs_do_not_swallow_sentences() {
        assert_eq!(type_of("Hi all,", None, SourceKind::Chat), None);
        assert_eq!(type_of("Thanks, Maya", None, SourceKind::Chat), None);
        assert!(
            type_of(
                "Best practice is to pin the version in the lock file.",
                None,
                SourceKind::Chat
            )
            .is_some()
        );
    }

    #[test]
    fn a_style_rule_in_the_imperative_is_a_constraint() {
        assert_eq!(
            type_of(
                "Surround top-level functions with two blank lines.",
                None,
                SourceKind::Document
            ),
            Some(EpistemicType::Constraint)
        );
    }

    #[test]
    fn an_exception_line_is_an_observation() {
        assert_eq!(
            type_of("KeyError: 'minutes'", None, SourceKind::Chat),
            Some(EpistemicType::Observation)
        );
    }
}
