//! The ranking core of every search: candidates from LanceDB, their graph state from Neo4j,
//! relevance · φ, and the cap that keeps what was replaced below what replaced it.

use std::collections::{HashMap, HashSet};

use epigraph_schemas::memory::Standing;
use epigraph_sinks::lance::{SearchHit, SearchMode, SearchRequest};

use crate::graph::MemoryCard;
use crate::rank::{AsOf, Intent, Phi};
use crate::{QueryError, QueryService};

/// A search as the ranking core sees it.
#[derive(Clone, Debug)]
pub struct SearchQuery {
    /// Text.
    pub text: String,
    /// Results wanted.
    pub k: usize,
    /// Type filter.
    pub types: Vec<String>,
    /// Instant.
    pub as_of: Option<i64>,
    /// Keep superseded items.
    pub include_superseded: bool,
    /// Retrievers.
    pub mode: SearchMode,
    /// Candidates per retriever.
    pub candidates: usize,
    /// Apply φ.
    pub modulate: bool,
}

/// A ranked memory object.
#[derive(Clone, Debug)]
pub struct Ranked {
    /// The retrieval hit.
    pub hit: SearchHit,
    /// Its graph state.
    pub card: MemoryCard,
    /// Normalised fused relevance.
    pub relevance: f64,
    /// φ.
    pub phi: Phi,
    /// relevance · φ.
    pub score: f64,
}

impl QueryService {
    /// Retrieve candidates, read their graph state, drop what is invisible at the instant and sort
    /// by relevance · φ. Returns every surviving candidate (the caller cuts) and the cards of the
    /// contradiction partners and successors of the first `k`.
    pub async fn rank(
        &self,
        tenant: &str,
        query: &SearchQuery,
    ) -> Result<(Vec<Ranked>, HashMap<String, MemoryCard>), QueryError> {
        let request = SearchRequest {
            query: query.text.clone(),
            k: query.k,
            tenant: tenant.to_string(),
            mode: query.mode,
            types: query.types.clone(),
            candidates: Some(query.candidates),
        };
        let hits = self.lance.search(&request).await?;
        let ids: Vec<String> = hits.iter().map(|h| h.id.clone()).collect();
        let mut cards = self.graph.memory_cards(tenant, &ids).await?;
        let relevance_of = Relevance::of(&hits, query.mode);
        let intent = Intent::of(&query.text);
        let times: Vec<i64> = hits
            .iter()
            .filter_map(|h| cards.get(&h.id).and_then(|c| c.t_valid))
            .collect();
        let span = times
            .iter()
            .min()
            .zip(times.iter().max())
            .map(|(lo, hi)| (*lo, *hi));
        let mut ranked = Vec::new();
        for hit in hits {
            let card = cards.remove(&hit.id).unwrap_or_else(|| MemoryCard {
                id: hit.id.clone(),
                memory_type: hit.memory_type.parse().unwrap_or_default(),
                text: hit.text.clone(),
                title: hit.title.clone(),
                source_id: hit.source_id.clone(),
                standing: Standing::Current,
                ..Default::default()
            });
            let view = AsOf {
                card: &card,
                at: query.as_of,
            };
            if !view.visible() {
                continue;
            }
            if !query.include_superseded && view.standing() == Standing::Superseded {
                continue;
            }
            let recency = match (span, card.t_valid) {
                (Some((lo, hi)), Some(t)) if hi > lo => Some((t - lo) as f64 / (hi - lo) as f64),
                (Some(_), Some(_)) => Some(1.0),
                _ => None,
            };
            let mut phi = self.config.rank.phi(&view, intent, recency);
            if !query.modulate {
                phi.phi = 1.0;
            }
            let relevance = relevance_of.of_hit(&hit);
            ranked.push(Ranked {
                score: relevance * phi.phi,
                hit,
                card,
                relevance,
                phi,
            });
        }
        if query.modulate && !intent.history {
            below_successors(&mut ranked, query.as_of, self.config.rank.below_successor);
        }
        ranked.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.card.id.cmp(&b.card.id))
        });
        let mut wanted: Vec<String> = Vec::new();
        let present: HashSet<&str> = ranked.iter().map(|r| r.card.id.as_str()).collect();
        for r in ranked.iter().take(query.k) {
            let view = AsOf {
                card: &r.card,
                at: query.as_of,
            };
            for edge in view
                .contradicts()
                .into_iter()
                .chain(view.superseded_by())
                .chain(view.blocked_by())
            {
                if !wanted.contains(&edge.id) {
                    wanted.push(edge.id.clone());
                }
            }
        }
        let missing: Vec<String> = wanted
            .iter()
            .filter(|id| !present.contains(id.as_str()))
            .cloned()
            .collect();
        let mut related = self.graph.memory_cards(tenant, &missing).await?;
        for r in &ranked {
            if wanted.contains(&r.card.id) {
                related.insert(r.card.id.clone(), r.card.clone());
            }
        }
        Ok((ranked, related))
    }
}

/// Ranks every superseded statement below the statements that superseded it (its score
/// capped at `factor` times the successor's), newest first so that a chain keeps its order: the
/// old state stays near the top when it is relevant, but never above what replaced it. An
/// announcement that a later statement carried out ("``x`` is deprecated", then "``x`` is
/// removed": `IMPLEMENTS`) ranks below that statement the same way: it came true, and the later
/// one says how things stand. The same holds between documents: a statement of a document that a later one replaced (its header
/// says `Superseded-By:`, or the later one's says `Replaces:`) ranks below the best candidate
/// of the document that replaced it.
pub fn below_successors(ranked: &mut [Ranked], at: Option<i64>, factor: f64) {
    // Newest first; between documents, the newest document first.
    let mut order: Vec<usize> = (0..ranked.len()).collect();
    order.sort_by_key(|i| {
        let card = &ranked[*i].card;
        std::cmp::Reverse((
            card.occurred_at.unwrap_or(i64::MIN),
            card.t_valid.unwrap_or(i64::MIN),
        ))
    });
    let index: HashMap<String, usize> = ranked
        .iter()
        .enumerate()
        .map(|(i, r)| (r.card.id.clone(), i))
        .collect();
    let mut by_source: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, r) in ranked.iter().enumerate() {
        by_source
            .entry(r.card.source_id.clone())
            .or_default()
            .push(i);
    }
    for i in order {
        let view = AsOf {
            card: &ranked[i].card,
            at,
        };
        let successors: Vec<usize> = view
            .replaced_by()
            .into_iter()
            .filter_map(|e| index.get(&e.id).copied())
            .collect();
        let successor_documents: Vec<usize> = view
            .source_superseded_by()
            .iter()
            .filter_map(|e| by_source.get(&e.id))
            .flatten()
            .copied()
            .collect();
        let cap = successors
            .into_iter()
            .chain(successor_documents)
            .map(|j| ranked[j].score * factor)
            .fold(f64::NAN, f64::max);
        if cap.is_finite() && ranked[i].score > cap {
            ranked[i].score = cap;
        }
    }
}

/// Relevance of a candidate from its retrievers' own scores, each min–max normalised over the
/// candidates (BM25 divided by the best BM25, cosine rescaled between the worst and best
/// cosine) and averaged over the retrievers of the mode; a retriever that did not return the
/// candidate counts 0. Reciprocal-rank fusion orders the candidates but is too flat to be
/// multiplied by φ: its scores differ by a few percent between neighbouring ranks.
#[derive(Clone, Copy, Debug)]
pub struct Relevance {
    max_bm25: f64,
    cos_range: Option<(f64, f64)>,
    mode: SearchMode,
}

impl Relevance {
    /// The normalisation of a candidate list.
    pub fn of(hits: &[SearchHit], mode: SearchMode) -> Self {
        let max_bm25 = hits
            .iter()
            .filter_map(|h| h.bm25)
            .fold(0.0f64, |m, s| m.max(s as f64));
        let cosines: Vec<f64> = hits
            .iter()
            .filter_map(|h| h.cosine)
            .map(f64::from)
            .collect();
        let cos_range = (!cosines.is_empty()).then(|| {
            (
                cosines.iter().copied().fold(f64::MAX, f64::min),
                cosines.iter().copied().fold(f64::MIN, f64::max),
            )
        });
        Relevance {
            max_bm25,
            cos_range,
            mode,
        }
    }

    /// Relevance in [0, 1].
    ///
    /// ```
    /// use epigraph_query::retrieve::Relevance;
    /// use epigraph_sinks::lance::{SearchHit, SearchMode};
    /// let hit = |id: &str, bm25: Option<f32>, cosine: Option<f32>| SearchHit {
    ///     id: id.into(), source_id: id.into(), memory_type: "EVIDENCE".into(), title: None,
    ///     text: String::new(), score: 0.0, bm25, cosine, text_rank: None, vector_rank: None };
    /// let hits = [hit("a", Some(8.0), Some(0.8)), hit("b", Some(2.0), Some(0.4)), hit("c", None, Some(0.6))];
    /// let r = Relevance::of(&hits, SearchMode::Hybrid);
    /// assert_eq!(r.of_hit(&hits[0]), 1.0);
    /// assert_eq!(r.of_hit(&hits[1]), 0.125);
    /// assert!((r.of_hit(&hits[2]) - 0.25).abs() < 1e-6);
    /// ```
    pub fn of_hit(&self, hit: &SearchHit) -> f64 {
        let bm25 = match (hit.bm25, self.max_bm25 > 0.0) {
            (Some(s), true) => s as f64 / self.max_bm25,
            _ => 0.0,
        };
        let cosine = match (hit.cosine, self.cos_range) {
            (Some(c), Some((lo, hi))) if hi > lo => (c as f64 - lo) / (hi - lo),
            (Some(_), Some(_)) => 1.0,
            _ => 0.0,
        };
        let has_text = self.max_bm25 > 0.0;
        let has_vector = self.cos_range.is_some();
        match (self.mode, has_text, has_vector) {
            (SearchMode::Text, _, _) | (SearchMode::Hybrid, true, false) => bm25,
            (SearchMode::Vector, _, _) | (SearchMode::Hybrid, false, true) => cosine,
            (SearchMode::Hybrid, true, true) => (bm25 + cosine) / 2.0,
            (SearchMode::Hybrid, false, false) => 0.0,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::graph::EdgeRef;

    /// A candidate of a source with a valid time and score (no text), for ranking tests.
    pub(crate) fn ranked(id: &str, source: &str, occurred_at: i64, score: f64) -> Ranked {
        Ranked {
            hit: SearchHit {
                id: id.into(),
                source_id: source.into(),
                memory_type: "DECISION".into(),
                title: None,
                text: String::new(),
                score: 0.0,
                bm25: None,
                cosine: None,
                text_rank: None,
                vector_rank: None,
            },
            card: MemoryCard {
                id: id.into(),
                source_id: source.into(),
                standing: Standing::Current,
                occurred_at: Some(occurred_at),
                t_valid: Some(occurred_at),
                ..Default::default()
            },
            relevance: score,
            phi: Phi {
                phi: 1.0,
                passages: 1.0,
                priority: 1.0,
                standing: 1.0,
                edges: 1.0,
                recency: 1.0,
                k: 0.5,
            },
            score,
        }
    }

    fn replaced_by(r: &mut Ranked, source: &str, t_valid: i64) {
        r.card.source_superseded_by.push(EdgeRef {
            id: source.into(),
            t_valid: Some(t_valid),
            ..Default::default()
        });
    }

    #[test]
    fn a_replaced_document_ranks_below_the_one_that_replaced_it_down_a_chain() {
        // PEP 241 → 314 → 345, the oldest the most relevant to the query.
        let mut all = vec![
            ranked("a", "pep-0241", 1, 0.98),
            ranked("b", "pep-0314", 2, 0.84),
            ranked("c", "pep-0345", 3, 0.76),
            ranked("d", "pep-0241", 1, 0.20),
        ];
        replaced_by(&mut all[0], "pep-0314", 2);
        replaced_by(&mut all[3], "pep-0314", 2);
        replaced_by(&mut all[1], "pep-0345", 3);
        below_successors(&mut all, None, 0.98);
        let score = |id: &str| all.iter().find(|r| r.card.id == id).unwrap().score;
        assert!(score("c") > score("b") && score("b") > score("a"));
        assert_eq!(score("d"), 0.20, "a low score is not raised");
        // As of before 345 replaced 314, 314 is not capped by it.
        let mut earlier = vec![
            ranked("b", "pep-0314", 2, 0.84),
            ranked("c", "pep-0345", 3, 0.76),
        ];
        replaced_by(&mut earlier[0], "pep-0345", 3);
        below_successors(&mut earlier, Some(2), 0.98);
        assert_eq!(earlier[0].score, 0.84);
    }

    #[test]
    fn an_announcement_ranks_below_the_statement_that_carried_it_out() {
        // "``epoch2num`` is deprecated" (3.3), then "``epoch2num`` is removed" (3.7).
        let mut all = vec![
            ranked("deprecated", "matplotlib-3.3", 1, 0.90),
            ranked("removed", "matplotlib-3.7", 2, 0.60),
        ];
        all[0].card.implemented_by.push(EdgeRef {
            id: "removed".into(),
            t_valid: Some(2),
            ..Default::default()
        });
        below_successors(&mut all, None, 0.98);
        assert!(
            (all[0].score - 0.60 * 0.98).abs() < 1e-12,
            "{}",
            all[0].score
        );
        // As of before the removal, the announcement is the news.
        let mut earlier = all.clone();
        earlier[0].score = 0.90;
        below_successors(&mut earlier, Some(1), 0.98);
        assert_eq!(earlier[0].score, 0.90);
    }
}
