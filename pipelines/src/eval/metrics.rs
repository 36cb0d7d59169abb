//! Classification metrics: per-class precision, recall and F1, macro averages, a confusion
//! matrix.

use std::collections::BTreeMap;

use serde::Serialize;

/// Precision, recall and F1 of one class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Prf {
    /// Gold items of the class.
    pub support: usize,
    /// Items predicted as the class.
    pub predicted: usize,
    /// Correct predictions.
    pub correct: usize,
    /// correct / predicted (0 when nothing was predicted).
    pub precision: f64,
    /// correct / support (0 without support).
    pub recall: f64,
    /// Harmonic mean of precision and recall.
    pub f1: f64,
}

/// Scores of a multi-class labelling.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ClassScores {
    /// Items scored.
    pub items: usize,
    /// Share of items predicted correctly.
    pub accuracy: f64,
    /// Per class.
    pub per_class: BTreeMap<String, Prf>,
    /// Mean F1 over the classes in `macro_classes` that have support.
    pub macro_f1: f64,
    /// Mean F1 over every class with support.
    pub macro_f1_all: f64,
    /// gold → predicted → count.
    pub confusion: BTreeMap<String, BTreeMap<String, usize>>,
}

/// Scores `(gold, predicted)` pairs; `macro_classes` are the classes averaged in `macro_f1`.
///
/// ```
/// use epigraph::eval::metrics::score;
/// let pairs = [("A", "A"), ("A", "B"), ("B", "B"), ("C", "C")];
/// let s = score(pairs.iter().map(|(g, p)| (g.to_string(), p.to_string())), &["A", "B"]);
/// assert_eq!(s.per_class["A"].recall, 0.5);
/// assert_eq!(s.per_class["B"].precision, 0.5);
/// assert!((s.macro_f1 - (2.0 / 3.0)).abs() < 1e-9);
/// assert_eq!(s.accuracy, 0.75);
/// ```
pub fn score(
    pairs: impl IntoIterator<Item = (String, String)>,
    macro_classes: &[&str],
) -> ClassScores {
    let mut scores = ClassScores::default();
    let mut correct_total = 0;
    for (gold, predicted) in pairs {
        scores.items += 1;
        scores.per_class.entry(gold.clone()).or_default().support += 1;
        scores
            .per_class
            .entry(predicted.clone())
            .or_default()
            .predicted += 1;
        if gold == predicted {
            scores.per_class.entry(gold.clone()).or_default().correct += 1;
            correct_total += 1;
        }
        *scores
            .confusion
            .entry(gold)
            .or_default()
            .entry(predicted)
            .or_default() += 1;
    }
    for prf in scores.per_class.values_mut() {
        prf.precision = ratio(prf.correct, prf.predicted);
        prf.recall = ratio(prf.correct, prf.support);
        prf.f1 = if prf.precision + prf.recall > 0.0 {
            2.0 * prf.precision * prf.recall / (prf.precision + prf.recall)
        } else {
            0.0
        };
    }
    let mean = |filter: &dyn Fn(&str) -> bool| {
        let f1s: Vec<f64> = scores
            .per_class
            .iter()
            .filter(|(c, p)| p.support > 0 && filter(c))
            .map(|(_, p)| p.f1)
            .collect();
        if f1s.is_empty() {
            0.0
        } else {
            f1s.iter().sum::<f64>() / f1s.len() as f64
        }
    };
    scores.macro_f1 = mean(&|c| macro_classes.contains(&c));
    scores.macro_f1_all = mean(&|_| true);
    scores.accuracy = ratio(correct_total, scores.items);
    scores
}

/// `a / b`, 0 when `b` is 0.
pub fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// A fixed-width table of per-class scores, for terminals.
pub fn table(scores: &ClassScores) -> String {
    let mut out = format!(
        "{:<12} {:>7} {:>9} {:>9} {:>7} {:>7}\n",
        "class", "support", "predicted", "precision", "recall", "F1"
    );
    for (class, p) in &scores.per_class {
        out.push_str(&format!(
            "{:<12} {:>7} {:>9} {:>9.3} {:>7.3} {:>7.3}\n",
            class, p.support, p.predicted, p.precision, p.recall, p.f1
        ));
    }
    out.push_str(&format!(
        "macro-F1 (nine types) {:.3}   macro-F1 (all) {:.3}   accuracy {:.3}   items {}\n",
        scores.macro_f1, scores.macro_f1_all, scores.accuracy, scores.items
    ));
    out
}
