//! `epigraph eval relations --generated <dir>`: precision and recall of the vocabulary
//! relations the extractor reads (`WORKS_ON`, `MANAGES`, `REPORTS_TO`, …) against the
//! generator's `labels/relations.jsonl`.
//!
//! Both sides are graphs over labelled identities. The predicted graph is what `extract_graph`
//! builds from every live source version (one edge per relation type and pair of entities,
//! whichever sources state it); an edge's ends are mapped to the labelled identities of the
//! mentions of those entities (the matching of `eval identity`). An edge is correct when a
//! labelled relation of the same predicate joins those identities; a labelled relation is
//! recalled when some edge is. Labels of units that are no longer live (edited away, or the
//! source deleted) are not counted. `precision (tracked)` counts only edges whose two ends are
//! labelled mentions: the generator labels relations only in the units it writes to state them,
//! so an untracked edge may be right.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use epigraph_operators::{Extractor, GraphElement, Relation, SourceVersion};
use serde::{Deserialize, Serialize};

use super::epistemics::live_graph;
use super::extraction::load_generated;
use super::identity::matched_mentions;

/// A line of `labels/relations.jsonl`.
#[derive(Debug, Deserialize)]
struct RelationLabel {
    source_id: String,
    text: String,
    subject: String,
    predicate: String,
    object: String,
}

/// Scores of one predicate (or all).
#[derive(Clone, Debug, Default, Serialize)]
pub struct RelationScores {
    /// Labelled relations of live units.
    pub gold: usize,
    /// Labelled relations found.
    pub recalled: usize,
    /// Predicted relations.
    pub predicted: usize,
    /// … whose two ends are labelled mentions.
    pub predicted_tracked: usize,
    /// Predicted relations that are labelled.
    pub correct: usize,
    /// correct / predicted.
    pub precision: f64,
    /// correct / predicted_tracked.
    pub precision_tracked: f64,
    /// recalled / gold.
    pub recall: f64,
}

impl RelationScores {
    fn finish(mut self) -> Self {
        let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        self.precision = ratio(self.correct, self.predicted);
        self.precision_tracked = ratio(self.correct, self.predicted_tracked);
        self.recall = ratio(self.recalled, self.gold);
        self
    }
}

/// The relations report.
#[derive(Clone, Debug, Serialize)]
pub struct RelationReport {
    /// Sources read.
    pub sources: usize,
    /// All predicates.
    pub all: RelationScores,
    /// Per predicate (lower case, as labelled).
    pub per_predicate: BTreeMap<String, RelationScores>,
    /// Up to 10 labelled relations not found: (unit text, predicate).
    pub misses: Vec<(String, String)>,
    /// Up to 10 tracked predictions that are wrong: (statement text, relation type).
    pub false_positives: Vec<(String, String)>,
}

/// Evaluates relation extraction on a generated corpus folder.
pub fn evaluate_relations(extractor: Arc<Extractor>, dir: &Path) -> Result<RelationReport> {
    let sources = load_generated(dir)?;
    let extractions: Vec<_> = sources
        .iter()
        .map(|s| extractor.extract(&s.version))
        .collect();
    let (matched, _) = matched_mentions(&sources, &extractions);
    let mut gold_of: HashMap<&str, BTreeSet<&str>> = HashMap::new();
    for m in matched.iter().flatten() {
        gold_of
            .entry(m.extracted.as_str())
            .or_default()
            .insert(m.gold.as_str());
    }
    let bodies: HashMap<&str, &str> = sources
        .iter()
        .map(|s| (s.version.source_id.as_str(), s.version.body.as_str()))
        .collect();
    let path = dir.join("labels/relations.jsonl");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    // The labelled graph: (predicate, subject, object) → a unit stating it.
    let mut gold: BTreeMap<(String, String, String), String> = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let label: RelationLabel = serde_json::from_str(line)
            .with_context(|| format!("labels/relations.jsonl:{}", n + 1))?;
        let live = bodies
            .get(label.source_id.as_str())
            .is_some_and(|body| body.contains(&label.text));
        if live {
            gold.entry((label.predicate, label.subject, label.object))
                .or_insert(label.text);
        }
    }
    let vocabulary: BTreeSet<String> = extractor
        .ontology()
        .relations
        .iter()
        .map(|r| r.rel_type())
        .collect();
    let versions: Vec<SourceVersion> = sources.iter().map(|s| s.version.clone()).collect();
    // Structural edges share some names (a source's author `AUTHORED` it): only edges between
    // two entities are relations read from text.
    let entities: BTreeSet<&str> = extractions
        .iter()
        .flat_map(|x| x.sightings.iter().map(|s| s.entity_id.as_str()))
        .collect();
    let predicted: Vec<Relation> = live_graph(versions, extractor.clone())
        .into_iter()
        .filter_map(|e| match e {
            GraphElement::Relation(r)
                if vocabulary.contains(&r.rel_type)
                    && entities.contains(r.from.as_str())
                    && entities.contains(r.to.as_str()) =>
            {
                Some(r)
            }
            _ => None,
        })
        .collect();
    let mut all = RelationScores::default();
    let mut per: BTreeMap<String, RelationScores> = BTreeMap::new();
    let mut recalled: BTreeSet<(String, String, String)> = BTreeSet::new();
    let mut false_positives = Vec::new();
    for relation in &predicted {
        let predicate = relation.rel_type.to_ascii_lowercase();
        let ends = |id: &str| gold_of.get(id).cloned().unwrap_or_default();
        let (from, to) = (ends(&relation.from), ends(&relation.to));
        let tracked = !from.is_empty() && !to.is_empty();
        let mut correct = false;
        for subject in &from {
            for object in &to {
                let key = (predicate.clone(), subject.to_string(), object.to_string());
                if gold.contains_key(&key) {
                    correct = true;
                    recalled.insert(key);
                }
            }
        }
        let scores = per.entry(predicate.clone()).or_default();
        for s in [&mut all, scores] {
            s.predicted += 1;
            s.predicted_tracked += tracked as usize;
            s.correct += correct as usize;
        }
        if tracked && !correct && false_positives.len() < 10 {
            let text = relation
                .provenance
                .as_ref()
                .and_then(|p| {
                    bodies
                        .get(p.source_id.as_str())
                        .and_then(|body| char_slice(body, p.span))
                })
                .unwrap_or_default();
            false_positives.push((text.to_string(), relation.rel_type.clone()));
        }
    }
    let mut misses = Vec::new();
    for (key, text) in &gold {
        let found = recalled.contains(key);
        let scores = per.entry(key.0.clone()).or_default();
        for s in [&mut all, scores] {
            s.gold += 1;
            s.recalled += found as usize;
        }
        if !found && misses.len() < 10 {
            misses.push((text.clone(), key.0.clone()));
        }
    }
    Ok(RelationReport {
        sources: sources.len(),
        all: all.finish(),
        per_predicate: per.into_iter().map(|(k, v)| (k, v.finish())).collect(),
        misses,
        false_positives,
    })
}

/// The text of a character span `[start, end)` of `body`.
fn char_slice(body: &str, (start, end): (u32, u32)) -> Option<&str> {
    let mut indices = body.char_indices().map(|(i, _)| i).chain([body.len()]);
    let from = indices.nth(start as usize)?;
    let to = if end > start {
        indices.nth((end - start - 1) as usize)?
    } else {
        from
    };
    body.get(from..to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn char_spans_are_sliced_by_characters() {
        assert_eq!(char_slice("€320K SAFE", (0, 5)), Some("€320K"));
        assert_eq!(char_slice("€320K SAFE", (6, 10)), Some("SAFE"));
        assert_eq!(char_slice("abc", (1, 1)), Some(""));
        assert_eq!(char_slice("abc", (2, 9)), None);
    }
}
