//! `epigraph eval epistemics --generated <dir>`: supersession, contradiction and answered
//! questions judged by the dataflow, against the generator's ground truth.
//!
//! The live versions of the corpus go through `extract_graph` (extraction, identity resolution
//! and [`epigraph_operators::epistemic::relate`]) in one in-process dataflow. Each labelled unit
//! (source id + text) is matched to the memory object of that source with that text. Scored:
//! - **supersession**: `SUPERSEDES` edges (newer → older) against `labels/supersessions.jsonl`;
//! - **contradiction**: `CONTRADICTS` pairs (unordered) against `labels/contradictions.jsonl`;
//! - **answers**: `ANSWERS` edges (answer → question) against `labels/answers.jsonl`;
//! - **blocks**: `BLOCKS` edges (question → held-up unit) against `labels/blocks.jsonl`, when
//!   the corpus has it (corpora written before the generator wrote blocks have none).
//!
//! Precision counts every predicted edge (one between unlabelled units is a false positive);
//! recall counts every label, also those whose units the extractor did not produce
//! (`recall_extracted` leaves those out).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use differential_dataflow::input::Input;
use epigraph_operators::{Extractor, GraphElement, SourceVersion, extract_graph};
use serde::{Deserialize, Serialize};
use timely::dataflow::operators::capture::{Capture, Extract};

use super::extraction::load_generated;

/// Scores of one kind of judged edge.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EdgeScores {
    /// Labelled pairs.
    pub gold: usize,
    /// … whose two units were both extracted as memory objects.
    pub gold_extracted: usize,
    /// Predicted pairs.
    pub predicted: usize,
    /// Predicted pairs that are labelled.
    pub correct: usize,
    /// correct / predicted.
    pub precision: f64,
    /// Predicted pairs with at least one side among the units the generator tracks (the steps
    /// of its matters and its readings: every unit of `claims.jsonl` and of the edge labels).
    /// Pairs between two untracked filler units are outside its ground truth.
    pub predicted_tracked: usize,
    /// correct / predicted_tracked.
    pub precision_tracked: f64,
    /// correct / gold.
    pub recall: f64,
    /// correct / gold_extracted.
    pub recall_extracted: f64,
    /// F1 of precision and recall.
    pub f1: f64,
    /// A few false positives touching a tracked unit, as `(from text, to text)`, for error
    /// analysis.
    pub false_positives: Vec<(String, String)>,
    /// Misses among the extracted labels.
    pub misses: Vec<(String, String)>,
}

/// The report.
#[derive(Clone, Debug, Serialize)]
pub struct EpistemicsReport {
    /// Live source versions.
    pub sources: usize,
    /// Memory objects.
    pub memories: usize,
    /// `SUPERSEDES`.
    pub supersession: EdgeScores,
    /// `CONTRADICTS`, as unordered pairs.
    pub contradiction: EdgeScores,
    /// `ANSWERS`.
    pub answers: EdgeScores,
    /// `BLOCKS` (absent when the corpus has no `blocks.jsonl`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks: Option<EdgeScores>,
    /// Questions still open at the end / all questions.
    pub open_questions: (usize, usize),
}

#[derive(Deserialize)]
struct TextRef {
    source_id: String,
    text: String,
}

#[derive(Deserialize)]
struct ClaimLabel {
    source_id: String,
    text: String,
}

#[derive(Deserialize)]
struct SupersessionLabel {
    newer: TextRef,
    older: TextRef,
}

#[derive(Deserialize)]
struct ContradictionLabel {
    a: TextRef,
    b: TextRef,
}

#[derive(Deserialize)]
struct AnswerLabel {
    question: TextRef,
    answer: TextRef,
}

#[derive(Deserialize)]
struct BlockLabel {
    question: TextRef,
    blocked: TextRef,
}

/// Evaluates the judged edges on a generated corpus folder.
pub fn evaluate_epistemics(extractor: Arc<Extractor>, dir: &Path) -> Result<EpistemicsReport> {
    let sources = load_generated(dir)?;
    let versions: Vec<SourceVersion> = sources.iter().map(|s| s.version.clone()).collect();
    let n_sources = versions.len();
    let graph = live_graph(versions, extractor);
    // For an error analysis: every element of the judged graph, one JSON per line.
    if let Ok(path) = std::env::var("EPIGRAPH_EVAL_DUMP") {
        let mut out = String::new();
        for e in &graph {
            out.push_str(&serde_json::to_string(e)?);
            out.push('\n');
        }
        std::fs::write(&path, out).with_context(|| format!("writing {path}"))?;
    }
    let mut by_unit: HashMap<(String, String), String> = HashMap::new();
    let mut text_of: HashMap<String, String> = HashMap::new();
    let mut questions = (0, 0);
    for e in &graph {
        if let GraphElement::Memory(m) = e {
            by_unit
                .entry((m.source_id.clone(), collapse(&m.text)))
                .or_insert_with(|| m.id.clone());
            text_of.insert(m.id.clone(), m.text.clone());
            if m.memory_type == epigraph_operators::EpistemicType::Question {
                questions.1 += 1;
                if m.standing == epigraph_operators::Standing::Open {
                    questions.0 += 1;
                }
            }
        }
    }
    let edges = |rel_type: &str| -> BTreeSet<(String, String)> {
        graph
            .iter()
            .filter_map(|e| match e {
                GraphElement::Relation(r) if r.rel_type == rel_type => {
                    Some((r.from.clone(), r.to.clone()))
                }
                _ => None,
            })
            .collect()
    };
    let find = |r: &TextRef| {
        by_unit
            .get(&(r.source_id.clone(), collapse(&r.text)))
            .cloned()
    };
    let read = |name: &str| -> Result<String> {
        let path = dir.join("labels").join(name);
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))
    };
    let mut tracked: BTreeSet<String> = BTreeSet::new();
    for line in read("claims.jsonl")?.lines() {
        let l: ClaimLabel = serde_json::from_str(line).context("claims.jsonl")?;
        let unit = TextRef {
            source_id: l.source_id,
            text: l.text,
        };
        tracked.extend(find(&unit));
    }
    let mut supersessions = Vec::new();
    for line in read("supersessions.jsonl")?.lines() {
        let l: SupersessionLabel = serde_json::from_str(line).context("supersessions.jsonl")?;
        supersessions.push((find(&l.newer), find(&l.older)));
    }
    let mut contradictions = Vec::new();
    for line in read("contradictions.jsonl")?.lines() {
        let l: ContradictionLabel = serde_json::from_str(line).context("contradictions.jsonl")?;
        contradictions.push(unordered(find(&l.a), find(&l.b)));
    }
    contradictions.sort();
    contradictions.dedup();
    let mut answers = Vec::new();
    for line in read("answers.jsonl")?.lines() {
        let l: AnswerLabel = serde_json::from_str(line).context("answers.jsonl")?;
        answers.push((find(&l.answer), find(&l.question)));
    }
    let blocks = if dir.join("labels/blocks.jsonl").is_file() {
        let mut blocks = Vec::new();
        for line in read("blocks.jsonl")?.lines() {
            let l: BlockLabel = serde_json::from_str(line).context("blocks.jsonl")?;
            blocks.push((find(&l.question), find(&l.blocked)));
        }
        Some(blocks)
    } else {
        None
    };
    for (a, b) in supersessions
        .iter()
        .chain(&contradictions)
        .chain(&answers)
        .chain(blocks.iter().flatten())
    {
        tracked.extend(a.iter().chain(b).cloned());
    }
    let predicted_contradictions: BTreeSet<(String, String)> = edges("CONTRADICTS")
        .into_iter()
        .map(|(a, b)| if a <= b { (a, b) } else { (b, a) })
        .collect();
    let texts = |(a, b): &(String, String)| {
        (
            text_of.get(a).cloned().unwrap_or_default(),
            text_of.get(b).cloned().unwrap_or_default(),
        )
    };
    Ok(EpistemicsReport {
        sources: n_sources,
        memories: text_of.len(),
        supersession: score(&supersessions, &edges("SUPERSEDES"), &tracked, &texts),
        contradiction: score(&contradictions, &predicted_contradictions, &tracked, &texts),
        answers: score(&answers, &edges("ANSWERS"), &tracked, &texts),
        blocks: blocks.map(|gold| score(&gold, &edges("BLOCKS"), &tracked, &texts)),
        open_questions: questions,
    })
}

type Pair = (Option<String>, Option<String>);
type Texts<'a> = &'a dyn Fn(&(String, String)) -> (String, String);

fn unordered(a: Option<String>, b: Option<String>) -> Pair {
    match (&a, &b) {
        (Some(x), Some(y)) if y < x => (b, a),
        _ => (a, b),
    }
}

fn score(
    gold: &[Pair],
    predicted: &BTreeSet<(String, String)>,
    tracked: &BTreeSet<String>,
    texts: Texts<'_>,
) -> EdgeScores {
    let predicted_tracked = predicted
        .iter()
        .filter(|(a, b)| tracked.contains(a) || tracked.contains(b))
        .count();
    let extracted: BTreeSet<(String, String)> = gold
        .iter()
        .filter_map(|(a, b)| Some((a.clone()?, b.clone()?)))
        .collect();
    let correct = predicted.intersection(&extracted).count();
    let ratio = |a: usize, b: usize| if b == 0 { 1.0 } else { a as f64 / b as f64 };
    let (precision, recall) = (ratio(correct, predicted.len()), ratio(correct, gold.len()));
    let f1 = if precision + recall == 0.0 {
        0.0
    } else {
        2.0 * precision * recall / (precision + recall)
    };
    EdgeScores {
        gold: gold.len(),
        gold_extracted: extracted.len(),
        predicted: predicted.len(),
        correct,
        precision,
        predicted_tracked,
        precision_tracked: ratio(correct, predicted_tracked),
        recall,
        recall_extracted: ratio(correct, extracted.len()),
        f1,
        false_positives: predicted
            .difference(&extracted)
            .take(error_samples())
            .map(texts)
            .collect(),
        misses: extracted
            .difference(predicted)
            .take(error_samples())
            .map(texts)
            .collect(),
    }
}

/// How many false positives and misses the report lists per edge type: 8, or
/// `EPIGRAPH_EVAL_ERRORS` for an error analysis (`EPIGRAPH_EVAL_DUMP=<file>` writes the whole
/// judged graph as JSON lines next to it).
fn error_samples() -> usize {
    std::env::var("EPIGRAPH_EVAL_ERRORS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(8)
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The live graph of `versions`, computed in one in-process dataflow.
pub(crate) fn live_graph(
    versions: Vec<SourceVersion>,
    extractor: Arc<Extractor>,
) -> Vec<GraphElement> {
    let captured = timely::execute_directly(move |worker| {
        let (mut input, captured) = worker.dataflow::<u64, _, _>(|scope| {
            let (input, docs) = scope.new_collection::<SourceVersion, isize>();
            let graph = extract_graph(docs, extractor).consolidate();
            (input, graph.inner.capture())
        });
        for version in versions {
            input.insert(version);
        }
        input.close();
        while worker.step() {}
        captured
    });
    let mut net: BTreeMap<GraphElement, isize> = BTreeMap::new();
    for (_, updates) in captured.extract() {
        for (element, _, diff) in updates {
            *net.entry(element).or_default() += diff;
        }
    }
    net.into_iter()
        .filter(|(_, d)| *d > 0)
        .map(|(e, _)| e)
        .collect()
}
