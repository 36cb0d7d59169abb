//! Document ranking for `level=source`: three signals per document, fused.
//!
//! - **memory**: today's path, a document's best memory object (relevance · φ, capped below
//!   what replaced it) plus a tenth of its next two;
//! - **chunk**: its best chunk of source text (the `chunks` table), BM25 over the best BM25 of
//!   the candidates averaged with the cosine rescaled between the worst and best candidate
//!   (the plain-RAG hybrid of `eval/retrieval/chunk_hybrid_baseline.py`);
//! - **document**: document-level term evidence, the sum of the BM25 of its three best chunks
//!   (a query's words spread over several passages of the same document add up; bounded to
//!   three so that a long document does not win by length).
//!
//! - **graph**: the mass a personalised PageRank from the best memory objects brought to the
//!   document's memory objects and source by walking typed edges, entities and document links
//!   ([`crate::expand`]); it can bring in a document no retriever found.
//!
//! Each signal is divided by its best value over the documents, then either summed with
//! weights (`minmax`) or fused by reciprocal rank (`rrf`). The chunk and document signals are
//! multiplied by the document's φ on passages (that of its best memory object without the
//! priority factor, [`crate::rank::Phi::passages`]; the memory signal carries the whole φ
//! already), and, unless the query asks about history, a document that a later one replaced
//! (`SUPERSEDES` between the sources, or its best statement superseded by a statement of the
//! other, or an announcement the other carried out: `IMPLEMENTS`) scores at most
//! `below_successor` times the replacing document.

use std::collections::HashMap;

use epigraph_sinks::lance::ChunkHit;
use serde::Serialize;
use utoipa::ToSchema;

use crate::expand::{Neighbourhood, NodeKind};
use crate::graph::{MemoryCard, SubjectReplacement};
use crate::rank::AsOf;
pub use crate::rank::{SourceFusion, Weights};
use crate::retrieve::Ranked;

/// The best chunk of a document, for explain.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct ChunkEvidence {
    /// Chunk id.
    pub id: String,
    /// Position in its source.
    pub chunk_index: i64,
    /// BM25, when the full-text retriever found it.
    pub bm25: Option<f32>,
    /// Cosine, when the vector retriever found it.
    pub cosine: Option<f32>,
}

/// One document's evidence and fused score.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// Source id.
    pub source_id: String,
    /// Memory signal (raw: best score plus a tenth of the next two).
    pub memory: f64,
    /// Chunk signal (raw, in [0, 1]).
    pub chunk: f64,
    /// Document signal (raw: sum of its three best chunk BM25 scores).
    pub document: f64,
    /// Graph signal (raw: the walked mass of its memory objects and source).
    pub graph: f64,
    /// Its node that received the most walked mass (for explain and, for a document only the
    /// walk found, its title and snippet).
    pub graph_node: Option<String>,
    /// φ of its best memory object on passages ([`crate::rank::Phi::passages`]: without the
    /// priority factor; 1 without one, or unmodulated).
    pub phi: f64,
    /// Its memory objects among the candidates, best first (indices into the ranked list).
    pub members: Vec<usize>,
    /// Its best chunk (index into the chunk list).
    pub best_chunk: Option<usize>,
    /// Documents that had replaced it at the query's instant.
    pub replaced_by: Vec<String>,
    /// Those of them that replaced one of its statements on an identifier the query names: the
    /// question is about that identifier, so they are lifted to its score before the cap.
    pub successors_on_subject: Vec<String>,
    /// When it was written (for the newest-first order of the cap).
    pub occurred_at: Option<i64>,
    /// The fused score.
    pub score: f64,
    /// Weighted contributions of memory, chunk, document and graph to the score.
    pub contributions: [f64; 4],
    /// Rank (from 1) of the document by each signal, when it has it.
    pub ranks: [Option<usize>; 4],
    /// The document it was capped below, if any.
    pub capped_below: Option<String>,
}

/// The names of the signals, in the order of [`Document::contributions`].
pub const SIGNALS: [&str; 4] = ["memory", "chunk", "document", "graph"];

impl Document {
    /// A document with no evidence yet.
    pub fn new(source_id: &str) -> Document {
        Document {
            source_id: source_id.to_string(),
            memory: 0.0,
            chunk: 0.0,
            document: 0.0,
            graph: 0.0,
            graph_node: None,
            phi: 1.0,
            members: Vec::new(),
            best_chunk: None,
            replaced_by: Vec::new(),
            successors_on_subject: Vec::new(),
            occurred_at: None,
            score: 0.0,
            contributions: [0.0; 4],
            ranks: [None; 4],
            capped_below: None,
        }
    }

    /// The signal that brought it: the largest weighted contribution.
    pub fn brought_by(&self) -> &'static str {
        let mut best = 0;
        for i in 1..4 {
            if self.contributions[i] > self.contributions[best] {
                best = i;
            }
        }
        SIGNALS[best]
    }
}

/// Chunk relevance from the two retrievers: BM25 over the best BM25 of the candidates and the
/// cosine rescaled between the worst and best candidate, averaged over the retrievers that
/// returned candidates (a retriever that did not return this chunk counts 0).
///
/// ```
/// use epigraph_query::fuse::chunk_relevance;
/// let scores = [(Some(8.0), Some(0.8)), (Some(2.0), Some(0.4)), (None, Some(0.6))];
/// let r = chunk_relevance(&scores);
/// assert_eq!(r[0], 1.0);
/// assert_eq!(r[1], 0.125);
/// assert!((r[2] - 0.25).abs() < 1e-6);
/// assert_eq!(chunk_relevance(&[(Some(3.0), None)]), [1.0]);
/// ```
pub fn chunk_relevance(scores: &[(Option<f32>, Option<f32>)]) -> Vec<f64> {
    let max_bm25 = scores
        .iter()
        .filter_map(|(b, _)| *b)
        .fold(0.0f64, |m, s| m.max(f64::from(s)));
    let cosines: Vec<f64> = scores
        .iter()
        .filter_map(|(_, c)| c.map(f64::from))
        .collect();
    let lo = cosines.iter().copied().fold(f64::MAX, f64::min);
    let hi = cosines.iter().copied().fold(f64::MIN, f64::max);
    let retrievers = usize::from(max_bm25 > 0.0) + usize::from(!cosines.is_empty());
    scores
        .iter()
        .map(|(b, c)| {
            let bm25 = match b {
                Some(s) if max_bm25 > 0.0 => f64::from(*s) / max_bm25,
                _ => 0.0,
            };
            let cosine = match c {
                Some(c) if hi > lo => (f64::from(*c) - lo) / (hi - lo),
                Some(_) => 1.0,
                None => 0.0,
            };
            if retrievers == 0 {
                0.0
            } else {
                (bm25 + cosine) / retrievers as f64
            }
        })
        .collect()
}

/// The documents of the candidates: memory objects (`ranked`, best first) and chunks, with
/// their raw signals, φ and the documents that replaced them at `at`: a later document that
/// replaced the document itself, or its best statement, or any of its statements on one of the
/// query's `subjects` (the identifiers it names, [`crate::subjects::named`]).
pub fn documents(
    ranked: &[Ranked],
    chunks: &[ChunkHit],
    at: Option<i64>,
    modulate: bool,
    subjects: &[String],
) -> Vec<Document> {
    let mut docs: Vec<Document> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut slot = |docs: &mut Vec<Document>, source: &str| -> usize {
        *index.entry(source.to_string()).or_insert_with(|| {
            docs.push(Document::new(source));
            docs.len() - 1
        })
    };
    let source_of: HashMap<&str, &str> = ranked
        .iter()
        .map(|r| (r.card.id.as_str(), r.card.source_id.as_str()))
        .collect();
    for (i, r) in ranked.iter().enumerate() {
        let d = slot(&mut docs, &r.card.source_id);
        let doc = &mut docs[d];
        if doc.members.is_empty() {
            doc.phi = if modulate { r.phi.passages } else { 1.0 };
            doc.occurred_at = r.card.occurred_at;
            let view = AsOf { card: &r.card, at };
            // Replaced: its document by a later one, or its best statement by a statement of
            // another document (superseding it, or carrying out what it announced).
            let by_statement: Vec<String> = view
                .replaced_by()
                .into_iter()
                .filter_map(|e| source_of.get(e.id.as_str()))
                .filter(|s| **s != r.card.source_id)
                .map(|s| s.to_string())
                .collect();
            doc.replaced_by = view
                .source_superseded_by()
                .iter()
                .map(|e| e.id.clone())
                .chain(by_statement)
                .collect();
        }
        doc.members.push(i);
    }
    if !subjects.is_empty() {
        on_subjects_replaced(&mut docs, ranked, &source_of, at, subjects);
    }
    for doc in &mut docs {
        let mut scores: Vec<f64> = doc.members.iter().map(|i| ranked[*i].score).collect();
        scores.sort_by(|a, b| b.total_cmp(a));
        doc.memory = scores.first().copied().unwrap_or(0.0)
            + scores.iter().skip(1).take(2).sum::<f64>() * 0.1;
    }
    let relevance = chunk_relevance(
        &chunks
            .iter()
            .map(|c| (c.bm25, c.cosine))
            .collect::<Vec<_>>(),
    );
    let mut bm25s: HashMap<usize, Vec<f64>> = HashMap::new();
    for (i, (chunk, rel)) in chunks.iter().zip(relevance).enumerate() {
        let d = slot(&mut docs, &chunk.source_id);
        let doc = &mut docs[d];
        if doc.best_chunk.is_none() || rel > doc.chunk {
            doc.chunk = rel;
            doc.best_chunk = Some(i);
        }
        if let Some(b) = chunk.bm25 {
            bm25s.entry(d).or_default().push(f64::from(b));
        }
    }
    for (d, mut scores) in bm25s {
        scores.sort_by(|a, b| b.total_cmp(a));
        docs[d].document = scores.iter().take(3).sum();
    }
    docs
}

/// The documents that replaced a statement of each document on one of `subjects` (superseded
/// it, or carried out what it announced), added to its `replaced_by` when they are later than
/// it: "Is `Image.ANTIALIAS` still there?" puts the release that removed it above the one whose
/// list of filters named it, whatever else the older one says about it.
fn on_subjects_replaced(
    docs: &mut [Document],
    ranked: &[Ranked],
    source_of: &HashMap<&str, &str>,
    at: Option<i64>,
    subjects: &[String],
) {
    let mut found: Vec<(usize, String)> = Vec::new();
    for (d, doc) in docs.iter().enumerate() {
        for i in &doc.members {
            let card = &ranked[*i].card;
            if !subjects
                .iter()
                .any(|s| crate::subjects::mentions(&card.text, s))
            {
                continue;
            }
            let view = AsOf { card, at };
            for e in view.replaced_by() {
                if let Some(source) = source_of.get(e.id.as_str()) {
                    found.push((d, source.to_string()));
                }
            }
        }
    }
    add_successors_on_subject(docs, found);
}

/// What the graph holds beyond the candidates: statements of candidate documents replaced on
/// one of the query's identifiers by statements of other documents
/// ([`GraphReader::subject_replacements`](crate::graph::GraphReader::subject_replacements)),
/// added like [`documents`] adds those among the candidates: the later document goes into the
/// replaced one's `replaced_by` and `successors_on_subject`.
///
/// ```
/// use epigraph_query::fuse::{Document, add_subject_replacements};
/// use epigraph_query::graph::SubjectReplacement;
/// let doc = |id: &str, at: i64| Document { occurred_at: Some(at), ..Document::new(id) };
/// let mut docs = vec![doc("mpl-3.6", 1), doc("mpl-3.8", 2)];
/// let pair = |replaced: &str, by: &str| SubjectReplacement {
///     replaced: replaced.into(), by: by.into(), subject: "use_line_collection".into(),
/// };
/// // 3.8 carried out what 3.6 announced; an edge from an earlier document is not a successor.
/// add_subject_replacements(&mut docs, &[pair("mpl-3.6", "mpl-3.8"), pair("mpl-3.8", "mpl-3.6")]);
/// assert_eq!(docs[0].successors_on_subject, ["mpl-3.8"]);
/// assert_eq!(docs[0].replaced_by, ["mpl-3.8"]);
/// assert!(docs[1].replaced_by.is_empty());
/// ```
pub fn add_subject_replacements(docs: &mut [Document], replacements: &[SubjectReplacement]) {
    let index: HashMap<&str, usize> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| (d.source_id.as_str(), i))
        .collect();
    let found: Vec<(usize, String)> = replacements
        .iter()
        .filter_map(|r| index.get(r.replaced.as_str()).map(|d| (*d, r.by.clone())))
        .collect();
    add_successors_on_subject(docs, found);
}

/// Each `(document, by)`: `by` replaced one of the document's statements on a subject of the
/// query; kept when it is another document written later (or of unknown date).
fn add_successors_on_subject(docs: &mut [Document], found: Vec<(usize, String)>) {
    let written: HashMap<String, Option<i64>> = docs
        .iter()
        .map(|d| (d.source_id.clone(), d.occurred_at))
        .collect();
    for (d, source) in found {
        let doc = &mut docs[d];
        let later = match (written.get(&source).copied().flatten(), doc.occurred_at) {
            (Some(theirs), Some(ours)) => theirs > ours,
            _ => true,
        };
        if source == doc.source_id || !later || doc.successors_on_subject.contains(&source) {
            continue;
        }
        if !doc.replaced_by.contains(&source) {
            doc.replaced_by.push(source.clone());
        }
        doc.successors_on_subject.push(source);
    }
}

/// Rank (from 1) of each document by a signal (`None` where it is 0), ties by source id.
fn ranks(docs: &[Document], signal: impl Fn(&Document) -> f64) -> Vec<Option<usize>> {
    let mut order: Vec<usize> = (0..docs.len())
        .filter(|i| signal(&docs[*i]) > 0.0)
        .collect();
    order.sort_by(|a, b| {
        signal(&docs[*b])
            .total_cmp(&signal(&docs[*a]))
            .then_with(|| docs[*a].source_id.cmp(&docs[*b].source_id))
    });
    let mut out = vec![None; docs.len()];
    for (rank, i) in order.into_iter().enumerate() {
        out[i] = Some(rank + 1);
    }
    out
}

/// Reciprocal-rank constant of the `rrf` fusion.
const RRF_K: f64 = 60.0;

/// Score each document: the signals fused with `weights` (chunk, document and graph modulated
/// by the document's φ), best first, ties by source id.
///
/// ```
/// use epigraph_query::fuse::{Document, SourceFusion, Weights, fuse};
/// let doc = |id: &str, memory: f64, chunk: f64, document: f64| Document {
///     memory, chunk, document, ..Document::new(id)
/// };
/// let weights = Weights { memory: 0.25, chunk: 0.5, document: 0.25, graph: 0.0 };
/// let mut docs = vec![doc("statement", 1.0, 0.2, 1.0), doc("passage", 0.5, 1.0, 8.0)];
/// fuse(&mut docs, weights, SourceFusion::Minmax);
/// assert_eq!(docs[0].source_id, "passage");
/// assert_eq!(docs[0].brought_by(), "chunk");
/// ```
pub fn fuse(docs: &mut [Document], weights: Weights, fusion: SourceFusion) {
    let w = weights.normalised();
    let weight = [w.memory, w.chunk, w.document, w.graph];
    let modulated = |d: &Document| {
        [
            d.memory,
            d.chunk * d.phi,
            d.document * d.phi,
            d.graph * d.phi,
        ]
    };
    let best = docs.iter().fold([0.0f64; 4], |mut m, d| {
        for (m, s) in m.iter_mut().zip(modulated(d)) {
            *m = m.max(s);
        }
        m
    });
    let rank_lists: Vec<Vec<Option<usize>>> =
        (0..4).map(|s| ranks(docs, |d| modulated(d)[s])).collect();
    for (i, doc) in docs.iter_mut().enumerate() {
        doc.ranks = [
            rank_lists[0][i],
            rank_lists[1][i],
            rank_lists[2][i],
            rank_lists[3][i],
        ];
        let values = modulated(doc);
        for s in 0..4 {
            doc.contributions[s] = match fusion {
                SourceFusion::Minmax if best[s] > 0.0 => weight[s] * values[s] / best[s],
                SourceFusion::Rrf => doc.ranks[s]
                    .map(|r| weight[s] * (RRF_K + 1.0) / (RRF_K + r as f64))
                    .unwrap_or(0.0),
                _ => 0.0,
            };
        }
        doc.score = doc.contributions.iter().sum();
    }
    sort(docs);
}

/// Add the graph signal: each node's walked `mass` ([`crate::expand::walked_mass`]) counts for
/// the document it belongs to (a memory object's source, or a source node itself); a document
/// only the walk reached joins the candidates, with the documents its header links say
/// replaced it. (Its φ, time and statement-level replacements are [`reached_state`]'s.)
///
/// ```
/// use std::collections::HashMap;
/// use epigraph_query::expand::{Neighbourhood, NodeKind, WalkNode};
/// use epigraph_query::fuse::{Document, add_walk};
/// let mut hood = Neighbourhood::default();
/// hood.node(WalkNode {
///     id: "m2".into(), kind: NodeKind::Memory, source_id: Some("kep-753".into()),
///     label: "…".into(), title: None, text: None, degree: None,
/// });
/// let mut docs = vec![Document::new("kep-9")];
/// add_walk(&mut docs, &hood, &HashMap::from([("m2".to_string(), 0.2)]));
/// assert_eq!(docs[1].source_id, "kep-753");
/// assert_eq!(docs[1].graph, 0.2);
/// assert_eq!(docs[1].graph_node.as_deref(), Some("m2"));
/// ```
pub fn add_walk(docs: &mut Vec<Document>, hood: &Neighbourhood, mass: &HashMap<String, f64>) {
    let mut index: HashMap<String, usize> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| (d.source_id.clone(), i))
        .collect();
    let mut best: HashMap<usize, (f64, bool, String)> = HashMap::new();
    let mut reached: Vec<(&String, &f64)> = mass.iter().filter(|(_, m)| **m > 0.0).collect();
    reached.sort_by(|a, b| a.0.cmp(b.0));
    for (id, m) in reached {
        let Some(node) = hood.nodes.get(id) else {
            continue;
        };
        let Some(source) = node.source_id.as_deref().filter(|s| !s.is_empty()) else {
            continue;
        };
        let d = *index.entry(source.to_string()).or_insert_with(|| {
            docs.push(Document::new(source));
            docs.len() - 1
        });
        docs[d].graph += m;
        // The best memory object names the document; a source node only when no memory
        // object of it was reached.
        let is_memory = node.kind == NodeKind::Memory;
        let entry = best.entry(d).or_insert((0.0, false, id.clone()));
        if (is_memory && !entry.1) || (is_memory == entry.1 && *m > entry.0) {
            *entry = (*m, is_memory, id.clone());
        }
    }
    for (d, (_, _, node)) in best {
        docs[d].graph_node = Some(node);
    }
    for doc in docs.iter_mut() {
        for newer in hood.replaced_by.get(&doc.source_id).into_iter().flatten() {
            if !doc.replaced_by.contains(newer) {
                doc.replaced_by.push(newer.clone());
            }
        }
    }
}

/// The graph state of a document only the walk reached, from the card of its best reached
/// memory object: its φ, when it was written, and the documents that replaced it at `at` (by
/// their headers, or by a statement superseding this one: `source_of` names a memory object's
/// document).
pub fn reached_state(
    doc: &mut Document,
    card: &MemoryCard,
    phi: f64,
    at: Option<i64>,
    source_of: impl Fn(&str) -> Option<String>,
) {
    doc.phi = phi;
    doc.occurred_at = card.occurred_at;
    let view = AsOf { card, at };
    let by_statement: Vec<String> = view
        .replaced_by()
        .into_iter()
        .filter_map(|e| source_of(&e.id))
        .filter(|s| *s != card.source_id)
        .collect();
    let by_header: Vec<String> = view
        .source_superseded_by()
        .iter()
        .map(|e| e.id.clone())
        .collect();
    for source in by_header.into_iter().chain(by_statement) {
        if !doc.replaced_by.contains(&source) {
            doc.replaced_by.push(source);
        }
    }
}

fn sort(docs: &mut [Document]) {
    docs.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.source_id.cmp(&b.source_id))
    });
}

/// Nothing above what replaced it: a document that a later one (among the candidates)
/// replaced scores at most `factor` times that one's score, newest first so that a chain keeps
/// its order; then sorted again. A successor on the query's subject
/// ([`Document::successors_on_subject`]) is first lifted to the score of the document it
/// replaced: asked whether `PILLOW_VERSION` still exists, the release that removed it again
/// takes the place of the one that had deprecated it, instead of both sinking below documents
/// that do not speak of it.
///
/// ```
/// use epigraph_query::fuse::{Document, below_replacing_documents};
/// let doc = |id: &str, score: f64, at: i64, replaced_by: &[&str]| Document {
///     score, occurred_at: Some(at),
///     replaced_by: replaced_by.iter().map(|s| s.to_string()).collect(),
///     ..Document::new(id)
/// };
/// let mut docs = vec![doc("241", 0.9, 1, &["314"]), doc("314", 0.8, 2, &["345"]), doc("345", 0.5, 3, &[])];
/// below_replacing_documents(&mut docs, 0.98);
/// let ids: Vec<&str> = docs.iter().map(|d| d.source_id.as_str()).collect();
/// assert_eq!(ids, ["345", "314", "241"]);
/// assert_eq!(docs[1].capped_below.as_deref(), Some("345"));
/// ```
pub fn below_replacing_documents(docs: &mut [Document], factor: f64) {
    let index: HashMap<String, usize> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| (d.source_id.clone(), i))
        .collect();
    let lifts: Vec<(usize, f64)> = docs
        .iter()
        .flat_map(|d| {
            d.successors_on_subject
                .iter()
                .filter_map(|id| index.get(id).map(|j| (*j, d.score)))
        })
        .collect();
    for (j, score) in lifts {
        docs[j].score = docs[j].score.max(score);
    }
    let mut order: Vec<usize> = (0..docs.len()).collect();
    order.sort_by_key(|i| std::cmp::Reverse(docs[*i].occurred_at.unwrap_or(i64::MIN)));
    for i in order {
        let cap = docs[i]
            .replaced_by
            .iter()
            .filter_map(|id| index.get(id).map(|j| (id, docs[*j].score * factor)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((by, cap)) = cap
            && docs[i].score > cap
        {
            docs[i].score = cap;
            docs[i].capped_below = Some(by.clone());
        }
    }
    sort(docs);
}

#[cfg(test)]
mod tests {
    use super::*;
    use epigraph_schemas::memory::Standing;

    fn doc(id: &str, memory: f64, chunk: f64, document: f64) -> Document {
        Document {
            memory,
            chunk,
            document,
            ..Document::new(id)
        }
    }

    fn ids(docs: &[Document]) -> Vec<&str> {
        docs.iter().map(|d| d.source_id.as_str()).collect()
    }

    /// Fusion by the chunk signal alone (min-max).
    fn fuse_chunks_only(docs: &mut [Document]) {
        let weights = Weights {
            memory: 0.0,
            chunk: 1.0,
            document: 0.0,
            graph: 0.0,
        };
        fuse(docs, weights, SourceFusion::Minmax);
    }

    #[test]
    fn each_signal_alone_orders_by_itself_and_weights_trade_them() {
        let base = vec![
            doc("statement", 1.0, 0.3, 2.0),
            doc("passage", 0.4, 1.0, 3.0),
            doc("spread", 0.2, 0.5, 9.0),
        ];
        for (weights, first) in [
            ((1.0, 0.0, 0.0), "statement"),
            ((0.0, 1.0, 0.0), "passage"),
            ((0.0, 0.0, 1.0), "spread"),
        ] {
            for fusion in [SourceFusion::Minmax, SourceFusion::Rrf] {
                let mut docs = base.clone();
                let (memory, chunk, document) = weights;
                fuse(
                    &mut docs,
                    Weights {
                        memory,
                        chunk,
                        document,
                        graph: 0.0,
                    },
                    fusion,
                );
                assert_eq!(docs[0].source_id, first, "{weights:?} {fusion:?}");
                assert_eq!(
                    docs[0].brought_by(),
                    SIGNALS[docs[0].ranks.iter().position(|r| *r == Some(1)).unwrap()]
                );
            }
        }
    }

    #[test]
    fn phi_modulates_the_passage_signals() {
        let mut docs = vec![doc("retired", 0.0, 1.0, 0.0), doc("live", 0.0, 0.9, 0.0)];
        docs[0].phi = 0.8;
        fuse_chunks_only(&mut docs);
        assert_eq!(ids(&docs), ["live", "retired"]);
    }

    #[test]
    fn the_walk_lifts_a_neighbour_and_brings_in_a_document_no_retriever_found() {
        use crate::expand::{Neighbourhood, NodeKind, WalkNode, walked_mass};
        let memory = |id: &str, source: &str| WalkNode {
            id: id.into(),
            kind: NodeKind::Memory,
            source_id: Some(source.into()),
            label: id.into(),
            title: None,
            text: None,
            degree: None,
        };
        let mut hood = Neighbourhood::default();
        for (id, source) in [("s", "seed-doc"), ("b", "basis"), ("n", "near")] {
            hood.node(memory(id, source));
        }
        hood.link("s", "b", "BASED_ON", 0.8);
        let mass = walked_mass(&hood, &[("s".into(), 1.0)], 0.5, 20, 0.5);
        let mut docs = vec![doc("seed-doc", 1.0, 0.0, 0.0), doc("near", 0.5, 0.0, 0.0)];
        add_walk(&mut docs, &hood, &mass);
        assert_eq!(docs.len(), 3, "the basis joins the candidates");
        fuse(
            &mut docs,
            Weights {
                memory: 0.5,
                chunk: 0.0,
                document: 0.0,
                graph: 0.5,
            },
            SourceFusion::Minmax,
        );
        assert_eq!(ids(&docs), ["seed-doc", "basis", "near"]);
        assert_eq!(docs[1].brought_by(), "graph");
        assert_eq!(docs[1].graph_node.as_deref(), Some("b"));
    }

    #[test]
    fn a_document_whose_announcement_a_later_one_carried_out_ranks_below_it() {
        use crate::graph::EdgeRef;
        // 3.3 says "``epoch2num`` is deprecated"; 3.7's "``epoch2num`` is removed" carried it out.
        let card = MemoryCard {
            id: "deprecated".into(),
            source_id: "matplotlib-3.3".into(),
            implemented_by: vec![EdgeRef {
                id: "removed".into(),
                t_valid: Some(2),
                ..Default::default()
            }],
            ..Default::default()
        };
        let source_of = |id: &str| (id == "removed").then(|| "matplotlib-3.7".to_string());
        let mut announced = doc("matplotlib-3.3", 0.0, 1.0, 0.0);
        reached_state(&mut announced, &card, 1.0, None, source_of);
        assert_eq!(announced.replaced_by, ["matplotlib-3.7"]);
        let mut docs = vec![announced, doc("matplotlib-3.7", 0.0, 0.8, 0.0)];
        for d in &mut docs {
            d.phi = 1.0;
            d.occurred_at = Some(if d.source_id == "matplotlib-3.7" {
                2
            } else {
                1
            });
        }
        fuse_chunks_only(&mut docs);
        below_replacing_documents(&mut docs, 0.98);
        assert_eq!(ids(&docs), ["matplotlib-3.7", "matplotlib-3.3"]);
        // As of before the removal, the deprecation stands on its own.
        let mut before = doc("matplotlib-3.3", 0.0, 1.0, 0.0);
        reached_state(&mut before, &card, 1.0, Some(1), source_of);
        assert!(before.replaced_by.is_empty());
    }

    #[test]
    fn a_document_whose_statement_on_the_queried_identifier_was_superseded_ranks_below_it() {
        use crate::graph::EdgeRef;
        let ranked = |id: &str, source: &str, at: i64, text: &str, score: f64| {
            let mut r = crate::retrieve::tests::ranked(id, source, at, score);
            r.hit.text = text.into();
            r.card.text = text.into();
            r.card.t_valid = None;
            r
        };
        // 2.7 explains ANTIALIAS at length (its best statement stands: history), and lists it
        // among the filters; 10.0's table row removes it, superseding the list.
        let mut list = ranked(
            "list",
            "pillow-2.7",
            1,
            "Possible values are: ``NEAREST``, ``BICUBIC`` and ``ANTIALIAS``.",
            0.5,
        );
        list.card.standing = Standing::Superseded;
        list.card.superseded_by = vec![EdgeRef {
            id: "row".into(),
            ..Default::default()
        }];
        let mut candidates = vec![
            ranked(
                "history",
                "pillow-2.7",
                1,
                "In Pillow 2.5 the default filter was changed to ``ANTIALIAS``.",
                0.9,
            ),
            ranked(
                "row",
                "pillow-10.0",
                3,
                "``Image.ANTIALIAS`` ``Image.LANCZOS``",
                0.6,
            ),
            list,
            ranked(
                "other",
                "pillow-8.1",
                2,
                "Pillow can now read images in QOI format.",
                0.8,
            ),
        ];
        let subjects = crate::subjects::named("Is Image.ANTIALIAS still there?");
        let docs = documents(&candidates, &[], None, true, &subjects);
        assert_eq!(docs[0].source_id, "pillow-2.7");
        assert_eq!(docs[0].replaced_by, ["pillow-10.0"]);
        assert_eq!(docs[0].successors_on_subject, ["pillow-10.0"]);
        let mut ranking = docs.clone();
        for d in &mut ranking {
            d.score = d.memory;
        }
        below_replacing_documents(&mut ranking, 0.98);
        // 10.0 takes 2.7's place (lifted to its score), above a document that does not speak
        // of ANTIALIAS, and 2.7 goes right below it.
        assert_eq!(ids(&ranking), ["pillow-10.0", "pillow-2.7", "pillow-8.1"]);
        assert_eq!(ranking[1].capped_below.as_deref(), Some("pillow-10.0"));
        // A query that names no identifier, or another one, reads only the best statement.
        assert!(
            documents(&candidates, &[], None, true, &[])[0]
                .replaced_by
                .is_empty()
        );
        let other = crate::subjects::named("Is Image.BILINEAR still there?");
        assert!(
            documents(&candidates, &[], None, true, &other)[0]
                .replaced_by
                .is_empty()
        );
        // Nor does an older document that superseded it count.
        candidates[1].card.occurred_at = Some(0);
        assert!(
            documents(&candidates, &[], None, true, &subjects)[0]
                .replaced_by
                .is_empty()
        );
    }
}
