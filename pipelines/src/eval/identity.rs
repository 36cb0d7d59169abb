//! `epigraph eval identity --generated <dir>`: how well entity mentions are resolved to their
//! real-world identities, against the generator's ground truth.
//!
//! Every labelled mention that an extracted mention overlaps is an item; its predicted cluster
//! is the canonical entity of that mention (the `SAME_AS` overlay computed by the dataflow), its
//! gold cluster the labelled identity. Reported: pairwise and B-cubed precision, recall and F1,
//! for all kinds and for people alone, next to the same scores without resolution (each entity
//! node its own cluster), and the share of labelled mentions that were matched at all.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use differential_dataflow::input::Input;
use epigraph_operators::extract::edge;
use epigraph_operators::resolve::SAME_AS;
use epigraph_operators::{Extraction, Extractor, GraphElement, SourceVersion, extract_graph};
use serde::Serialize;
use timely::dataflow::operators::capture::{Capture, Extract};

use super::extraction::{LabelledSource, load_generated};

/// Precision, recall and F1 of a clustering.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct ClusterScores {
    /// Pairwise precision.
    pub pairwise_precision: f64,
    /// Pairwise recall.
    pub pairwise_recall: f64,
    /// Pairwise F1.
    pub pairwise_f1: f64,
    /// B-cubed precision.
    pub bcubed_precision: f64,
    /// B-cubed recall.
    pub bcubed_recall: f64,
    /// B-cubed F1.
    pub bcubed_f1: f64,
    /// Items scored.
    pub items: usize,
}

/// The identity report.
#[derive(Clone, Debug, Serialize)]
pub struct IdentityReport {
    /// Labelled mentions.
    pub gold_mentions: usize,
    /// … overlapped by an extracted mention (the items scored).
    pub matched_mentions: usize,
    /// With resolution, all kinds.
    pub resolved: ClusterScores,
    /// With resolution, people only.
    pub resolved_people: ClusterScores,
    /// Without resolution (each entity node its own cluster), all kinds.
    pub unresolved: ClusterScores,
    /// Without resolution, people only.
    pub unresolved_people: ClusterScores,
    /// The five predicted clusters that mix the most labelled identities: canonical entity id,
    /// then `(labelled identity, mentions)` inside it.
    pub most_mixed: Vec<(String, Vec<(String, usize)>)>,
}

/// Pairwise and B-cubed scores of `(gold, predicted)` cluster labels, one per item.
///
/// ```
/// use epigraph::eval::identity::cluster_scores;
/// let perfect = cluster_scores(&[("a", "x"), ("a", "x"), ("b", "y")]);
/// assert_eq!((perfect.pairwise_f1, perfect.bcubed_f1), (1.0, 1.0));
/// let merged = cluster_scores(&[("a", "x"), ("b", "x")]);
/// assert_eq!(merged.pairwise_precision, 0.0);
/// assert_eq!(merged.bcubed_recall, 1.0);
/// ```
pub fn cluster_scores<G: AsRef<str>, P: AsRef<str>>(items: &[(G, P)]) -> ClusterScores {
    let mut cells: HashMap<(&str, &str), usize> = HashMap::new();
    let mut gold: HashMap<&str, usize> = HashMap::new();
    let mut pred: HashMap<&str, usize> = HashMap::new();
    for (g, p) in items {
        *cells.entry((g.as_ref(), p.as_ref())).or_default() += 1;
        *gold.entry(g.as_ref()).or_default() += 1;
        *pred.entry(p.as_ref()).or_default() += 1;
    }
    let pairs = |n: usize| (n * n.saturating_sub(1) / 2) as f64;
    let tp: f64 = cells.values().map(|n| pairs(*n)).sum();
    let gold_pairs: f64 = gold.values().map(|n| pairs(*n)).sum();
    let pred_pairs: f64 = pred.values().map(|n| pairs(*n)).sum();
    let ratio = |a: f64, b: f64| if b == 0.0 { 1.0 } else { a / b };
    let f1 = |p: f64, r: f64| {
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    };
    let (mut bp, mut br) = (0.0, 0.0);
    for ((g, p), n) in &cells {
        let n = *n as f64;
        bp += n * n / pred[p] as f64;
        br += n * n / gold[g] as f64;
    }
    let total = items.len().max(1) as f64;
    let (pp, pr) = (ratio(tp, pred_pairs), ratio(tp, gold_pairs));
    let (bp, br) = (bp / total, br / total);
    ClusterScores {
        pairwise_precision: pp,
        pairwise_recall: pr,
        pairwise_f1: f1(pp, pr),
        bcubed_precision: bp,
        bcubed_recall: br,
        bcubed_f1: f1(bp, br),
        items: items.len(),
    }
}

/// Evaluates identity resolution on a generated corpus folder.
pub fn evaluate_identity(extractor: Arc<Extractor>, dir: &Path) -> Result<IdentityReport> {
    let sources = load_generated(dir)?;
    let versions: Vec<SourceVersion> = sources.iter().map(|s| s.version.clone()).collect();
    let canonical = canonical_of(versions, extractor.clone());
    let extractions: Vec<_> = sources
        .iter()
        .map(|s| extractor.extract(&s.version))
        .collect();
    let (matched, gold_mentions) = matched_mentions(&sources, &extractions);
    // gold, pred, raw, person
    let items: Vec<(String, String, String, bool)> = matched
        .into_iter()
        .flatten()
        .map(|m| {
            let resolved = canonical
                .get(&m.extracted)
                .cloned()
                .unwrap_or_else(|| m.extracted.clone());
            (m.gold, resolved, m.extracted, m.person)
        })
        .collect();
    let score = |people: bool, resolved: bool| {
        let chosen: Vec<(&str, &str)> = items
            .iter()
            .filter(|(.., person)| !people || *person)
            .map(|(g, r, raw, _)| (g.as_str(), if resolved { r.as_str() } else { raw.as_str() }))
            .collect();
        cluster_scores(&chosen)
    };
    let mut clusters: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    for (gold, resolved, ..) in &items {
        *clusters
            .entry(resolved.as_str())
            .or_default()
            .entry(gold.as_str())
            .or_default() += 1;
    }
    let mut most_mixed: Vec<(String, Vec<(String, usize)>)> = clusters
        .into_iter()
        .filter(|(_, golds)| golds.len() > 1)
        .map(|(id, golds)| {
            let mut golds: Vec<(String, usize)> =
                golds.into_iter().map(|(g, n)| (g.to_string(), n)).collect();
            golds.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
            (id.to_string(), golds)
        })
        .collect();
    most_mixed.sort_by_key(|(_, golds)| std::cmp::Reverse(golds.len()));
    most_mixed.truncate(5);
    Ok(IdentityReport {
        most_mixed,
        gold_mentions,
        matched_mentions: items.len(),
        resolved: score(false, true),
        resolved_people: score(true, true),
        unresolved: score(false, false),
        unresolved_people: score(true, false),
    })
}

/// A labelled entity mention that an extracted mention overlaps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MatchedMention {
    /// The labelled identity.
    pub gold: String,
    /// The extracted entity's id (before resolution).
    pub extracted: String,
    /// A person.
    pub person: bool,
}

/// Per source (in the order given): the labelled mentions an extracted mention overlaps; and
/// how many labelled mentions there are in all. A mention is extracted when the source's
/// `MENTIONS` edges cover it, or when it is a candidate phrase naming an entity sighted
/// anywhere (as the dataflow's join finds it).
pub(crate) fn matched_mentions(
    sources: &[LabelledSource],
    extractions: &[Extraction],
) -> (Vec<Vec<MatchedMention>>, usize) {
    let mut known: HashMap<(String, String), String> = HashMap::new();
    for x in extractions {
        for s in &x.sightings {
            known
                .entry((s.tenant.clone(), s.key.clone()))
                .or_insert_with(|| s.entity_id.clone());
        }
    }
    let mut gold_mentions = 0;
    let mut out = Vec::with_capacity(sources.len());
    for (source, x) in sources.iter().zip(extractions) {
        let body = &source.version.body;
        let mut spans: Vec<((u32, u32), String)> = Vec::new();
        for e in &x.elements {
            if let GraphElement::Relation(r) = e
                && r.rel_type == edge::MENTIONS
                && let Some(p) = &r.provenance
            {
                spans.push((p.span, r.to.clone()));
            }
        }
        for c in &x.candidates {
            if let Some(id) = known.get(&(c.tenant.clone(), c.key.clone())) {
                spans.push((c.provenance.span, id.clone()));
            }
        }
        let mut matched = Vec::new();
        for unit in &source.units {
            let Some(byte) = body.find(&unit.text) else {
                continue;
            };
            let start = body[..byte].chars().count() as u32;
            for entity in &unit.entities {
                let Some(gold) = &entity.entity_id else {
                    continue;
                };
                gold_mentions += 1;
                let Some(at) = unit.text.find(&entity.text) else {
                    continue;
                };
                let s = start + unit.text[..at].chars().count() as u32;
                let e = s + entity.text.chars().count() as u32;
                if let Some((_, raw)) = spans.iter().find(|((a, b), _)| *a < e && s < *b) {
                    matched.push(MatchedMention {
                        gold: gold.clone(),
                        extracted: raw.clone(),
                        person: entity.kind == "Person",
                    });
                }
            }
        }
        out.push(matched);
    }
    (out, gold_mentions)
}

/// Member → canonical entity, from the `SAME_AS` edges `extract_graph` computes.
fn canonical_of(
    versions: Vec<SourceVersion>,
    extractor: Arc<Extractor>,
) -> BTreeMap<String, String> {
    let captured = timely::execute_directly(move |worker| {
        let (mut input, captured) = worker.dataflow::<u64, _, _>(|scope| {
            let (input, docs) = scope.new_collection::<SourceVersion, isize>();
            let same_as = extract_graph(docs, extractor)
                .filter(|e| matches!(e, GraphElement::Relation(r) if r.rel_type == SAME_AS))
                .consolidate();
            (input, same_as.inner.capture())
        });
        for version in versions {
            input.insert(version);
        }
        input.close();
        while worker.step() {}
        captured
    });
    let mut net: BTreeMap<(String, String), isize> = BTreeMap::new();
    for (_, updates) in captured.extract() {
        for (element, _, diff) in updates {
            if let GraphElement::Relation(r) = element {
                *net.entry((r.from, r.to)).or_default() += diff;
            }
        }
    }
    net.into_iter()
        .filter(|(_, d)| *d > 0)
        .map(|(pair, _)| pair)
        .collect()
}
