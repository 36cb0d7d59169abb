//! The read endpoints of the query service: search, context, nodes, neighbourhoods, entities,
//! contradictions, open questions, priorities, timelines and traversal. Every handler acts for
//! the tenant the [`auth`](super::auth) middleware resolved.

use std::collections::{HashMap, HashSet};

use axum::Json;
use axum::extract::{Extension, Path, Query, State};
use epigraph_sinks::lance::{SearchHit, SearchMode, SearchRequest};
use epigraph_sinks::neo4j::{
    ContradictionPair, EntityCard, Hop, MemoryCard, NodeView, Subgraph,
};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::auth::Tenant;
use super::context::{self, ContextBlock, ContextInput};
use super::rank::{AsOf, Intent, Phi, parse_instant};
use super::{ApiError, AppState, snippet};

const TYPES: [&str; 9] = [
    "DECISION",
    "CONSTRAINT",
    "EVIDENCE",
    "NARRATIVE",
    "PLAN",
    "EVALUATION",
    "OBSERVATION",
    "HYPOTHESIS",
    "QUESTION",
];

/// `DECISION,plan` → `["DECISION", "PLAN"]`, each checked against the nine types.
///
/// ```
/// use epigraph::serve::api::parse_types;
/// assert_eq!(parse_types(Some("decision, PLAN")).unwrap(), ["DECISION", "PLAN"]);
/// assert!(parse_types(Some("rumour")).is_err());
/// assert!(parse_types(None).unwrap().is_empty());
/// ```
pub fn parse_types(value: Option<&str>) -> Result<Vec<String>, ApiError> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    value
        .split(',')
        .map(|t| t.trim().to_ascii_uppercase())
        .filter(|t| !t.is_empty())
        .map(|t| {
            if TYPES.contains(&t.as_str()) {
                Ok(t)
            } else {
                Err(ApiError::bad_request(format!(
                    "unknown type {t:?}; the types are {}",
                    TYPES.join(", ")
                )))
            }
        })
        .collect()
}

fn as_of(value: Option<&str>) -> Result<Option<i64>, ApiError> {
    value
        .filter(|v| !v.trim().is_empty())
        .map(parse_instant)
        .transpose()
        .map_err(ApiError::bad_request)
}

/// `memory` (memory objects), `source` (aggregated to source documents) or `chunk` (raw source
/// text in ~1,200-token chunks: Mind Graph's fallback for what extraction did not capture).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Memory objects.
    #[default]
    Memory,
    /// Source documents.
    Source,
    /// Chunks of raw source text (current versions; no graph state, `types` and `as_of` do
    /// not apply).
    Chunk,
}

/// Query parameters of `GET /v1/search`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SearchParams {
    /// Query text.
    pub q: String,
    /// Results wanted (default 10, at most `serve.max_k`).
    pub k: Option<usize>,
    /// Only these epistemic types, comma-separated (`DECISION,PLAN`).
    pub types: Option<String>,
    /// The state at this instant: ms since the epoch, RFC 3339 or `YYYY-MM-DD`.
    pub as_of: Option<String>,
    /// Keep superseded items (demoted) in the results (default true); `false` drops them.
    pub include_superseded: Option<bool>,
    /// `memory` (default), `source` or `chunk`.
    #[param(value_type = Option<String>)]
    pub level: Option<Level>,
    /// `hybrid` (default), `text` or `vector`.
    #[param(value_type = Option<String>)]
    pub mode: Option<SearchMode>,
    /// Return the score components.
    pub explain: Option<bool>,
    /// Apply the graph-state modulation φ (default true); `false` ranks by relevance alone
    /// (an ablation: what the graph adds).
    pub modulate: Option<bool>,
    /// Tenant (development mode only; with tokens the token decides).
    pub tenant: Option<String>,
}

/// Score components of a result (`explain=true`).
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct Explain {
    /// Relevance in [0, 1]: the retrievers' normalised scores averaged (see [`Relevance`]).
    pub relevance: f64,
    /// BM25 score, when the full-text retriever found it.
    pub bm25: Option<f32>,
    /// Cosine similarity, when the vector retriever found it.
    pub cosine: Option<f32>,
    /// Rank in the full-text list.
    pub text_rank: Option<usize>,
    /// Rank in the vector list.
    pub vector_rank: Option<usize>,
    /// φ of Eq. 2.
    pub phi: f64,
    /// Priority factor of φ.
    pub phi_priority: f64,
    /// Standing factor of φ.
    pub phi_standing: f64,
    /// Edge factor of φ.
    pub phi_edges: f64,
    /// Recency factor of φ (questions about the present).
    pub phi_recency: f64,
    /// K used.
    pub k: f64,
    /// Intent read from the query: history, conflict, open questions.
    pub intent: Vec<String>,
}

/// One memory object in the results.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct SearchResult {
    /// Memory object id.
    pub id: String,
    /// Source item id.
    pub source_id: String,
    /// Epistemic type.
    #[serde(rename = "type")]
    pub memory_type: String,
    /// Source title.
    pub title: Option<String>,
    /// The statement, shortened.
    pub snippet: String,
    /// relevance · φ.
    pub score: f64,
    /// Standing as of the query's instant.
    pub standing: String,
    /// Priority K.
    pub k: Option<f64>,
    /// Valid from (ms since the epoch).
    pub t_valid: Option<i64>,
    /// Valid until.
    pub t_invalid: Option<i64>,
    /// Recorded time.
    pub recorded_at: Option<i64>,
    /// Memory objects it contradicts (in force).
    pub contradicts: Vec<String>,
    /// Memory objects that superseded it.
    pub superseded_by: Vec<String>,
    /// Statements that answered it.
    pub answered_by: Vec<String>,
    /// Statements it holds up (an open question's `BLOCKS` edges in force).
    pub blocks: Vec<String>,
    /// Open questions holding it up.
    pub blocked_by: Vec<String>,
    /// `search`, or `contradiction` for the other side of a contradiction of a result.
    pub via: String,
    /// Score components.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<Explain>,
}

/// One source document in the results (`level=source`).
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct SourceResult {
    /// Source item id.
    pub source_id: String,
    /// Best memory score plus a tenth of the next two.
    pub score: f64,
    /// Title.
    pub title: Option<String>,
    /// The best matching statement.
    pub snippet: String,
    /// The matching memory objects, best first.
    pub memory_ids: Vec<String>,
}

/// One chunk of raw source text in the results (`level=chunk`).
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct ChunkResult {
    /// Chunk id.
    pub id: String,
    /// Source item id.
    pub source_id: String,
    /// Source title.
    pub title: Option<String>,
    /// Position of the chunk in the source, from 0.
    pub chunk_index: i64,
    /// Character span of the chunk in the source body.
    pub char_start: i64,
    /// End of the span (exclusive).
    pub char_end: i64,
    /// The passage of the chunk that matches the query best (about 600 characters).
    pub snippet: String,
    /// The chunk's whole text.
    pub text: String,
    /// Fused retrieval score (reciprocal rank).
    pub score: f64,
    /// BM25 score, when the full-text retriever found it (`explain=true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bm25: Option<f32>,
    /// Cosine similarity, when the vector retriever found it (`explain=true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cosine: Option<f32>,
}

/// Results of any level.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum Results {
    /// `level=memory`.
    Memory(Vec<SearchResult>),
    /// `level=source`.
    Source(Vec<SourceResult>),
    /// `level=chunk`.
    Chunk(Vec<ChunkResult>),
}

/// The answer of `/v1/search`.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct SearchResponse {
    /// The query, echoed.
    pub query: String,
    /// Tenant searched.
    pub tenant: String,
    /// Level of the results.
    pub level: Level,
    /// The instant searched (RFC 3339), when not now.
    pub as_of: Option<String>,
    /// Ranked results.
    pub results: Results,
}

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

/// Retrieve candidates, read their graph state, drop what is invisible at the instant and sort
/// by relevance · φ. Returns every surviving candidate (the caller cuts) and the cards of the
/// contradiction partners and successors of the first `k`.
pub async fn rank(
    state: &AppState,
    tenant: &str,
    query: &SearchQuery,
) -> Result<(Vec<Ranked>, HashMap<String, MemoryCard>), ApiError> {
    let request = SearchRequest {
        query: query.text.clone(),
        k: query.k,
        tenant: tenant.to_string(),
        mode: query.mode,
        types: query.types.clone(),
        candidates: Some(query.candidates),
    };
    let hits = state.lance.search(&request).await?;
    let ids: Vec<String> = hits.iter().map(|h| h.id.clone()).collect();
    let mut cards = state.graph.memory_cards(tenant, &ids).await?;
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
            memory_type: hit.memory_type.clone(),
            text: hit.text.clone(),
            title: hit.title.clone(),
            source_id: hit.source_id.clone(),
            standing: "current".into(),
            ..Default::default()
        });
        let view = AsOf {
            card: &card,
            at: query.as_of,
        };
        if !view.visible() {
            continue;
        }
        if !query.include_superseded && view.standing() == "superseded" {
            continue;
        }
        let recency = match (span, card.t_valid) {
            (Some((lo, hi)), Some(t)) if hi > lo => Some((t - lo) as f64 / (hi - lo) as f64),
            (Some(_), Some(_)) => Some(1.0),
            _ => None,
        };
        let mut phi = state.config.rank.phi(&view, intent, recency);
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
        below_successors(&mut ranked, query.as_of, state.config.rank.below_successor);
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
    let mut related = state.graph.memory_cards(tenant, &missing).await?;
    for r in &ranked {
        if wanted.contains(&r.card.id) {
            related.insert(r.card.id.clone(), r.card.clone());
        }
    }
    Ok((ranked, related))
}

/// A superseded candidate whose successor is also a candidate ranks just below it (its score is
/// capped at `factor` times the successor's), newest first so that a chain keeps its order: the
/// old state stays near the top when it is relevant, but never above what replaced it. The same
/// holds between documents: a statement of a document that a later one replaced (its header
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
        let successors: Vec<usize> = if view.standing() == "superseded" {
            view.superseded_by()
                .iter()
                .filter_map(|e| index.get(&e.id).copied())
                .collect()
        } else {
            Vec::new()
        };
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
    /// use epigraph::serve::api::Relevance;
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

fn result(r: &Ranked, at: Option<i64>, via: &str, explain: bool, intent: Intent) -> SearchResult {
    let view = AsOf { card: &r.card, at };
    SearchResult {
        id: r.card.id.clone(),
        source_id: r.card.source_id.clone(),
        memory_type: r.card.memory_type.clone(),
        title: r.card.title.clone(),
        snippet: snippet(&r.card.text, 300),
        score: r.score,
        standing: view.standing().to_string(),
        k: r.card.k,
        t_valid: r.card.t_valid,
        t_invalid: r.card.t_invalid,
        recorded_at: r.card.recorded_at,
        contradicts: view.contradicts().iter().map(|e| e.id.clone()).collect(),
        superseded_by: view.superseded_by().iter().map(|e| e.id.clone()).collect(),
        answered_by: view.answered_by().iter().map(|e| e.id.clone()).collect(),
        blocks: view.blocks().iter().map(|e| e.id.clone()).collect(),
        blocked_by: view.blocked_by().iter().map(|e| e.id.clone()).collect(),
        via: via.to_string(),
        explain: explain.then(|| Explain {
            relevance: r.relevance,
            bm25: r.hit.bm25,
            cosine: r.hit.cosine,
            text_rank: r.hit.text_rank,
            vector_rank: r.hit.vector_rank,
            phi: r.phi.phi,
            phi_priority: r.phi.priority,
            phi_standing: r.phi.standing,
            phi_edges: r.phi.edges,
            phi_recency: r.phi.recency,
            k: r.phi.k,
            intent: [
                ("history", intent.history),
                ("conflict", intent.conflict),
                ("open_questions", intent.open_questions),
                ("current", intent.current),
            ]
            .into_iter()
            .filter(|(_, on)| *on)
            .map(|(name, _)| name.to_string())
            .collect(),
        }),
    }
}

/// The top `k` memory results, each followed by the other sides of its contradictions (which
/// are returned together with it even beyond `k`).
pub fn memory_results(
    ranked: &[Ranked],
    related: &HashMap<String, MemoryCard>,
    query: &SearchQuery,
    explain: bool,
    rank: &super::rank::RankConfig,
) -> Vec<SearchResult> {
    let intent = Intent::of(&query.text);
    let mut out = Vec::new();
    let mut shown: HashSet<String> = HashSet::new();
    for r in ranked.iter().take(query.k) {
        if !shown.insert(r.card.id.clone()) {
            continue;
        }
        out.push(result(r, query.as_of, "search", explain, intent));
        let view = AsOf {
            card: &r.card,
            at: query.as_of,
        };
        for edge in view.contradicts() {
            if shown.contains(&edge.id) {
                continue;
            }
            let Some(card) = related.get(&edge.id) else {
                continue;
            };
            let partner = ranked
                .iter()
                .find(|p| p.card.id == edge.id)
                .cloned()
                .unwrap_or_else(|| Ranked {
                    hit: SearchHit {
                        id: card.id.clone(),
                        source_id: card.source_id.clone(),
                        memory_type: card.memory_type.clone(),
                        title: card.title.clone(),
                        text: card.text.clone(),
                        score: 0.0,
                        bm25: None,
                        cosine: None,
                        text_rank: None,
                        vector_rank: None,
                    },
                    card: card.clone(),
                    relevance: 0.0,
                    // Its own φ (for explain); it was not retrieved, so its relevance is 0.
                    phi: rank.phi(
                        &AsOf {
                            card,
                            at: query.as_of,
                        },
                        intent,
                        None,
                    ),
                    score: r.score,
                });
            let mut partner = partner;
            partner.score = partner.score.max(r.score);
            shown.insert(edge.id.clone());
            out.push(result(
                &partner,
                query.as_of,
                "contradiction",
                explain,
                intent,
            ));
        }
    }
    out
}

/// Aggregate memory results to source documents: a source scores its best memory object plus a
/// tenth of its next two.
pub fn source_results(ranked: &[Ranked], k: usize) -> Vec<SourceResult> {
    let mut by_source: HashMap<&str, Vec<&Ranked>> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for r in ranked {
        let entry = by_source.entry(r.card.source_id.as_str()).or_default();
        if entry.is_empty() {
            order.push(r.card.source_id.as_str());
        }
        entry.push(r);
    }
    let mut sources: Vec<SourceResult> = order
        .into_iter()
        .map(|source| {
            let members = &by_source[source];
            let best = members[0];
            let score =
                best.score + members.iter().skip(1).take(2).map(|m| m.score).sum::<f64>() * 0.1;
            SourceResult {
                source_id: source.to_string(),
                score,
                title: best.card.title.clone(),
                snippet: snippet(&best.card.text, 300),
                memory_ids: members.iter().map(|m| m.card.id.clone()).collect(),
            }
        })
        .collect();
    sources.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.source_id.cmp(&b.source_id))
    });
    sources.truncate(k);
    sources
}

fn check_query(state: &AppState, q: &str) -> Result<(), ApiError> {
    if q.trim().is_empty() {
        return Err(ApiError::bad_request("q must not be empty"));
    }
    if q.chars().count() > state.config.max_query_chars {
        return Err(ApiError::bad_request(format!(
            "q is longer than {} characters",
            state.config.max_query_chars
        )));
    }
    Ok(())
}

/// Build the core query of a search request.
pub fn search_query(state: &AppState, params: &SearchParams) -> Result<SearchQuery, ApiError> {
    check_query(state, &params.q)?;
    let k = params.k.unwrap_or(10);
    if k == 0 || k > state.config.max_k {
        return Err(ApiError::bad_request(format!(
            "k must be between 1 and {}",
            state.config.max_k
        )));
    }
    let level = params.level.unwrap_or_default();
    let candidates = match level {
        Level::Memory => (k * 5).clamp(50, 500),
        Level::Source => (k * 20).clamp(200, 1000),
        Level::Chunk => (k * 4).clamp(20, 400),
    };
    if level == Level::Chunk && (params.types.is_some() || params.as_of.is_some()) {
        return Err(ApiError::bad_request(
            "types and as_of do not apply to level=chunk (chunks are today's raw text)",
        ));
    }
    Ok(SearchQuery {
        text: params.q.clone(),
        k,
        types: parse_types(params.types.as_deref())?,
        as_of: as_of(params.as_of.as_deref())?,
        include_superseded: params.include_superseded.unwrap_or(true),
        mode: params.mode.unwrap_or(SearchMode::Hybrid),
        candidates,
        modulate: params.modulate.unwrap_or(true),
    })
}

/// Hybrid retrieval modulated by graph state (OIDA Eq. 2).
#[utoipa::path(get, path = "/v1/search", params(SearchParams), tag = "retrieval",
    responses((status = 200, body = SearchResponse), (status = 400, body = super::ErrorBody),
              (status = 401, body = super::ErrorBody)))]
pub async fn search(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    Query(params): Query<SearchParams>,
) -> Result<Json<SearchResponse>, ApiError> {
    let query = search_query(&state, &params)?;
    let level = params.level.unwrap_or_default();
    if level == Level::Chunk {
        let results =
            chunk_results(&state, &tenant, &query, params.explain.unwrap_or(false)).await?;
        return Ok(Json(SearchResponse {
            query: params.q,
            tenant,
            level,
            as_of: None,
            results: Results::Chunk(results),
        }));
    }
    let (ranked, related) = rank(&state, &tenant, &query).await?;
    let results = match level {
        Level::Memory => {
            let results = memory_results(
                &ranked,
                &related,
                &query,
                params.explain.unwrap_or(false),
                &state.config.rank,
            );
            state.report_usage(&tenant, results.iter().map(|r| r.id.clone()).collect());
            Results::Memory(results)
        }
        Level::Source => {
            let results = source_results(&ranked, query.k);
            state.report_usage(
                &tenant,
                results
                    .iter()
                    .filter_map(|r| r.memory_ids.first().cloned())
                    .collect(),
            );
            Results::Source(results)
        }
        Level::Chunk => unreachable!("answered above"),
    };
    Ok(Json(SearchResponse {
        query: params.q,
        tenant,
        level,
        as_of: query.as_of.map(super::rank::show_instant),
        results,
    }))
}

/// Chunks of raw source text best matching the query (no graph state: chunks are Mind Graph's
/// fallback for what extraction did not capture).
pub async fn chunk_results(
    state: &AppState,
    tenant: &str,
    query: &SearchQuery,
    explain: bool,
) -> Result<Vec<ChunkResult>, ApiError> {
    let hits = state
        .lance
        .search_chunks(&SearchRequest {
            query: query.text.clone(),
            k: query.k,
            tenant: tenant.to_string(),
            mode: query.mode,
            types: Vec::new(),
            candidates: Some(query.candidates),
        })
        .await?;
    Ok(hits
        .into_iter()
        .map(|hit| ChunkResult {
            snippet: context::excerpt(&hit.text, &query.text, 600).1,
            id: hit.id,
            source_id: hit.source_id,
            title: hit.title,
            chunk_index: hit.chunk_index,
            char_start: hit.char_start,
            char_end: hit.char_end,
            text: hit.text,
            score: f64::from(hit.score),
            bm25: hit.bm25.filter(|_| explain),
            cosine: hit.cosine.filter(|_| explain),
        })
        .collect())
}

/// Body of `POST /v1/context`.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextRequest {
    /// What the agent is working on.
    pub query: String,
    /// Token budget of the block (default `serve.context.default_budget_tokens`).
    pub budget_tokens: Option<usize>,
    /// The state at this instant: ms since the epoch, RFC 3339 or `YYYY-MM-DD`.
    pub as_of: Option<String>,
    /// Only these epistemic types, comma-separated.
    pub types: Option<String>,
}

/// Build a context block (shared by the HTTP endpoint and MCP).
pub async fn context_block(
    state: &AppState,
    tenant: &str,
    request: &ContextRequest,
) -> Result<ContextBlock, ApiError> {
    check_query(state, &request.query)?;
    let budget = request
        .budget_tokens
        .unwrap_or(state.config.context.default_budget_tokens);
    if budget < 50 || budget > state.config.max_budget_tokens {
        return Err(ApiError::bad_request(format!(
            "budget_tokens must be between 50 and {}",
            state.config.max_budget_tokens
        )));
    }
    let query = SearchQuery {
        text: request.query.clone(),
        k: 40,
        types: parse_types(request.types.as_deref())?,
        as_of: as_of(request.as_of.as_deref())?,
        include_superseded: true,
        mode: SearchMode::Hybrid,
        candidates: 200,
        modulate: true,
    };
    let (ranked, related) = rank(state, tenant, &query).await?;
    let top: Vec<MemoryCard> = ranked
        .iter()
        .take(query.k)
        .map(|r| r.card.clone())
        .collect();
    let ids: Vec<String> = top.iter().map(|c| c.id.clone()).collect();
    let entities = state.graph.mentioned_entities(tenant, &ids, 12).await?;
    // Chunks hold the current text only: a block about an earlier instant goes without.
    let passages = if query.as_of.is_none() {
        let chunks = SearchQuery {
            k: 8,
            candidates: 32,
            ..query.clone()
        };
        chunk_results(state, tenant, &chunks, false)
            .await?
            .into_iter()
            .map(|c| context::Passage {
                id: c.id,
                source_id: c.source_id,
                title: c.title,
                char_start: c.char_start,
                text: c.text,
            })
            .collect()
    } else {
        Vec::new()
    };
    let input = ContextInput {
        query: request.query.clone(),
        tenant: tenant.to_string(),
        as_of: query.as_of,
        ranked: top,
        related,
        entities,
        passages,
    };
    let block = context::build(&input, budget, &state.config.context);
    let used: Vec<String> = block
        .sections
        .iter()
        .filter(|s| s.name != "entities" && s.name != "passages")
        .flat_map(|s| s.items.iter().map(|i| i.id.clone()))
        .collect();
    state.report_usage(tenant, used);
    Ok(block)
}

/// A token-budgeted context block for an agent.
#[utoipa::path(post, path = "/v1/context", request_body = ContextRequest, tag = "retrieval",
    params(("tenant" = Option<String>, Query, description = "Tenant (development mode only)")),
    responses((status = 200, body = ContextBlock), (status = 400, body = super::ErrorBody)))]
pub async fn context(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    Json(request): Json<ContextRequest>,
) -> Result<Json<ContextBlock>, ApiError> {
    Ok(Json(context_block(&state, &tenant, &request).await?))
}

/// Only the tenant parameter.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct TenantParams {
    /// Tenant (development mode only).
    pub tenant: Option<String>,
}

/// A node with its labels and properties.
#[utoipa::path(get, path = "/v1/nodes/{id}", tag = "graph",
    params(("id" = String, Path, description = "Node id"), TenantParams),
    responses((status = 200, body = NodeView), (status = 404, body = super::ErrorBody)))]
pub async fn node(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    Path(id): Path<String>,
    Query(_tenant): Query<TenantParams>,
) -> Result<Json<NodeView>, ApiError> {
    state
        .graph
        .node(&tenant, &id)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::not_found(format!("no node {id:?} in tenant {tenant:?}")))
}

/// Parameters of the neighbourhood.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct NeighborhoodParams {
    /// Hops, 1–3 (default 1).
    pub hops: Option<u8>,
    /// Most nodes returned besides the centre (default 100).
    pub limit: Option<usize>,
    /// Tenant (development mode only).
    pub tenant: Option<String>,
}

/// The nodes within `hops` of a node and the relationships between them.
#[utoipa::path(get, path = "/v1/nodes/{id}/neighborhood", tag = "graph",
    params(("id" = String, Path, description = "Node id"), NeighborhoodParams),
    responses((status = 200, body = Subgraph), (status = 404, body = super::ErrorBody)))]
pub async fn neighborhood(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    Path(id): Path<String>,
    Query(params): Query<NeighborhoodParams>,
) -> Result<Json<Subgraph>, ApiError> {
    let hops = params.hops.unwrap_or(1);
    if !(1..=3).contains(&hops) {
        return Err(ApiError::bad_request("hops must be 1, 2 or 3"));
    }
    state
        .graph
        .neighborhood(&tenant, &id, hops, params.limit.unwrap_or(100))
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::not_found(format!("no node {id:?} in tenant {tenant:?}")))
}

/// Parameters of the entity lookup.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EntityParams {
    /// A name, alias, address or id (case-insensitive).
    pub name: String,
    /// Match the whole name only (default false: substring).
    pub exact: Option<bool>,
    /// Most entities (default 20).
    pub limit: Option<usize>,
    /// Tenant (development mode only).
    pub tenant: Option<String>,
}

/// Entities by name, alias or address, reported as their canonical entity.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct EntitiesResponse {
    /// Matches, most mentioned first.
    pub entities: Vec<EntityCard>,
}

/// Alias-aware entity lookup.
#[utoipa::path(get, path = "/v1/entities", tag = "graph", params(EntityParams),
    responses((status = 200, body = EntitiesResponse), (status = 400, body = super::ErrorBody)))]
pub async fn entities(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    Query(params): Query<EntityParams>,
) -> Result<Json<EntitiesResponse>, ApiError> {
    if params.name.trim().len() < 2 {
        return Err(ApiError::bad_request("name needs at least two characters"));
    }
    let entities = state
        .graph
        .entities(
            &tenant,
            &params.name,
            params.exact.unwrap_or(false),
            params.limit.unwrap_or(20),
        )
        .await?;
    Ok(Json(EntitiesResponse { entities }))
}

/// Parameters of lists.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListParams {
    /// Most items (default 50).
    pub limit: Option<usize>,
    /// The state at this instant: ms since the epoch, RFC 3339 or `YYYY-MM-DD`.
    pub as_of: Option<String>,
    /// Contradictions: also those that ended (one side superseded).
    pub include_resolved: Option<bool>,
    /// Tenant (development mode only).
    pub tenant: Option<String>,
}

/// Contradiction pairs.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct ContradictionsResponse {
    /// Pairs, newest first.
    pub contradictions: Vec<ContradictionPair>,
}

/// Contradictions: both claims, their memory ids, sources and dates.
#[utoipa::path(get, path = "/v1/contradictions", tag = "graph", params(ListParams),
    responses((status = 200, body = ContradictionsResponse)))]
pub async fn contradictions(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    Query(params): Query<ListParams>,
) -> Result<Json<ContradictionsResponse>, ApiError> {
    Ok(Json(list_contradictions(&state, &tenant, &params).await?))
}

/// Contradictions as of an instant (shared with MCP).
pub async fn list_contradictions(
    state: &AppState,
    tenant: &str,
    params: &ListParams,
) -> Result<ContradictionsResponse, ApiError> {
    let at = as_of(params.as_of.as_deref())?;
    let limit = params.limit.unwrap_or(50);
    let include_resolved = params.include_resolved.unwrap_or(false) || at.is_some();
    let mut pairs = state
        .graph
        .contradictions(
            tenant,
            include_resolved,
            if at.is_some() { 1000 } else { limit },
        )
        .await?;
    if let Some(at) = at {
        pairs.retain(|p| {
            p.t_valid.is_none_or(|t| t <= at)
                && (params.include_resolved.unwrap_or(false) || p.t_invalid.is_none_or(|t| t > at))
        });
        pairs.truncate(limit);
    }
    Ok(ContradictionsResponse {
        contradictions: pairs,
    })
}

/// Open questions.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct QuestionsResponse {
    /// Open questions, most urgent (highest K) first.
    pub questions: Vec<MemoryCard>,
}

/// Open questions by urgency.
#[utoipa::path(get, path = "/v1/questions", tag = "graph", params(ListParams),
    responses((status = 200, body = QuestionsResponse)))]
pub async fn questions(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    Query(params): Query<ListParams>,
) -> Result<Json<QuestionsResponse>, ApiError> {
    Ok(Json(list_questions(&state, &tenant, &params).await?))
}

/// Open questions as of an instant (shared with MCP).
pub async fn list_questions(
    state: &AppState,
    tenant: &str,
    params: &ListParams,
) -> Result<QuestionsResponse, ApiError> {
    let at = as_of(params.as_of.as_deref())?;
    let mut questions = state
        .graph
        .open_questions(tenant, at, params.limit.unwrap_or(50))
        .await?;
    questions.retain(|q| {
        let view = AsOf { card: q, at };
        view.visible() && view.standing() == "open"
    });
    Ok(QuestionsResponse { questions })
}

/// Parameters of the priority list.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PriorityParams {
    /// How many (default 20).
    pub top: Option<usize>,
    /// Only these epistemic types, comma-separated.
    pub types: Option<String>,
    /// Tenant (development mode only).
    pub tenant: Option<String>,
}

/// Memory objects by priority.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct PrioritiesResponse {
    /// Highest K first.
    pub priorities: Vec<MemoryCard>,
}

/// The memory objects of highest priority K (Eq. 1).
#[utoipa::path(get, path = "/v1/priorities", tag = "graph", params(PriorityParams),
    responses((status = 200, body = PrioritiesResponse)))]
pub async fn priorities(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    Query(params): Query<PriorityParams>,
) -> Result<Json<PrioritiesResponse>, ApiError> {
    let types = parse_types(params.types.as_deref())?;
    let priorities = state
        .graph
        .priorities(&tenant, &types, params.top.unwrap_or(20))
        .await?;
    Ok(Json(PrioritiesResponse { priorities }))
}

/// Parameters of a timeline.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct TimelineParams {
    /// The subject: an entity's name, alias or id.
    pub subject: String,
    /// Only these epistemic types, comma-separated.
    pub types: Option<String>,
    /// The state at this instant.
    pub as_of: Option<String>,
    /// Most entries (default 200).
    pub limit: Option<usize>,
    /// Tenant (development mode only).
    pub tenant: Option<String>,
}

/// One entry of a timeline.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct TimelineEntry {
    /// The memory object.
    #[serde(flatten)]
    pub card: MemoryCard,
    /// Its standing as of the timeline's instant.
    pub standing_as_of: String,
}

/// What is known about a subject over time.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct TimelineResponse {
    /// The subject as asked.
    pub subject: String,
    /// The entities it resolved to.
    pub entities: Vec<EntityCard>,
    /// Oldest first.
    pub entries: Vec<TimelineEntry>,
}

/// Supersession history of a subject, as of an instant.
#[utoipa::path(get, path = "/v1/timeline", tag = "graph", params(TimelineParams),
    responses((status = 200, body = TimelineResponse), (status = 404, body = super::ErrorBody)))]
pub async fn timeline(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    Query(params): Query<TimelineParams>,
) -> Result<Json<TimelineResponse>, ApiError> {
    let types = parse_types(params.types.as_deref())?;
    let at = as_of(params.as_of.as_deref())?;
    let (entities, cards) = state
        .graph
        .timeline(
            &tenant,
            &params.subject,
            &types,
            params.limit.unwrap_or(200),
        )
        .await?;
    if entities.is_empty() {
        return Err(ApiError::not_found(format!(
            "no entity named {:?} in tenant {tenant:?}",
            params.subject
        )));
    }
    let entries = cards
        .into_iter()
        .filter(|c| AsOf { card: c, at }.visible())
        .map(|card| TimelineEntry {
            standing_as_of: AsOf { card: &card, at }.standing().to_string(),
            card,
        })
        .collect();
    Ok(Json(TimelineResponse {
        subject: params.subject,
        entities,
        entries,
    }))
}

/// Parameters of a traversal.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct TraverseParams {
    /// Start node id, or an entity name.
    pub from: String,
    /// Relationship types in order, comma-separated; `<TYPE` follows one backwards
    /// (`GOVERNED_BY,<EXCEPTION_TO,APPROVED_BY`).
    pub path: String,
    /// Most paths (default 50).
    pub limit: Option<usize>,
    /// Tenant (development mode only).
    pub tenant: Option<String>,
}

/// Paths found by a traversal.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct TraverseResponse {
    /// The start node ids used.
    pub from: Vec<String>,
    /// Each path as its nodes.
    pub paths: Vec<Vec<NodeView>>,
}

/// Multi-hop traversal along typed relationships.
#[utoipa::path(get, path = "/v1/traverse", tag = "graph", params(TraverseParams),
    responses((status = 200, body = TraverseResponse), (status = 400, body = super::ErrorBody)))]
pub async fn traverse(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    Query(params): Query<TraverseParams>,
) -> Result<Json<TraverseResponse>, ApiError> {
    let hops = params
        .path
        .split(',')
        .map(Hop::parse)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let mut starts = Vec::new();
    if state.graph.node(&tenant, &params.from).await?.is_some() {
        starts.push(params.from.clone());
    } else {
        for entity in state.graph.entities(&tenant, &params.from, true, 5).await? {
            starts.push(entity.id.clone());
            starts.extend(entity.merged);
        }
    }
    if starts.is_empty() {
        return Err(ApiError::not_found(format!(
            "no node or entity {:?} in tenant {tenant:?}",
            params.from
        )));
    }
    let limit = params.limit.unwrap_or(50);
    let mut paths = Vec::new();
    for start in &starts {
        paths.extend(
            state
                .graph
                .traverse(&tenant, start, &hops, limit)
                .await
                .map_err(|e| match e {
                    epigraph_sinks::SinkError::Config(m) => ApiError::bad_request(m),
                    other => other.into(),
                })?,
        );
        if paths.len() >= limit {
            paths.truncate(limit);
            break;
        }
    }
    Ok(Json(TraverseResponse {
        from: starts,
        paths,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use epigraph_sinks::neo4j::EdgeRef;

    fn ranked(id: &str, source: &str, occurred_at: i64, score: f64) -> Ranked {
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
                standing: "current".into(),
                occurred_at: Some(occurred_at),
                t_valid: Some(occurred_at),
                ..Default::default()
            },
            relevance: score,
            phi: Phi {
                phi: 1.0,
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
}
