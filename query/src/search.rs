//! Search: hybrid retrieval of memory objects, documents or chunks, modulated by graph state
//! (OIDA Eq. 2), as `GET /v1/search` and MCP `search_memory` ask for it.

use std::collections::{HashMap, HashSet};

use epigraph_schemas::memory::{EpistemicType, Standing};
use epigraph_sinks::lance::{ChunkHit, SearchHit, SearchMode, SearchRequest};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::context;
use crate::expand::{Neighbourhood, NodeKind, PathStep, best_paths, walked_mass};
use crate::fuse::{self, ChunkEvidence};
use crate::graph::{MemoryCard, Restatement, SubjectReplacement};
use crate::rank::{AsOf, Intent, RankConfig, parse_instant, show_instant};
use crate::retrieve::{Ranked, SearchQuery};
use crate::{QueryError, QueryService, snippet};

/// `DECISION,plan` → `["DECISION", "PLAN"]`, each checked against the nine types.
///
/// ```
/// use epigraph_query::search::parse_types;
/// assert_eq!(parse_types(Some("decision, PLAN")).unwrap(), ["DECISION", "PLAN"]);
/// assert!(parse_types(Some("rumour")).is_err());
/// assert!(parse_types(None).unwrap().is_empty());
/// ```
pub fn parse_types(value: Option<&str>) -> Result<Vec<String>, QueryError> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    value
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| {
            t.parse::<EpistemicType>()
                .map(EpistemicType::name)
                .map_err(|e| QueryError::invalid(e.to_string()))
        })
        .collect()
}

pub(crate) fn as_of(value: Option<&str>) -> Result<Option<i64>, QueryError> {
    value
        .filter(|v| !v.trim().is_empty())
        .map(parse_instant)
        .transpose()
        .map_err(QueryError::from)
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
    /// Relevance in [0, 1]: the retrievers' normalised scores averaged (see
    /// [`Relevance`](crate::retrieve::Relevance)).
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
    /// Epistemic type, upper case (`DECISION`, …).
    #[serde(rename = "type", with = "epigraph_schemas::memory::type_name")]
    #[schema(value_type = String, example = "DECISION")]
    pub memory_type: EpistemicType,
    /// Source title.
    pub title: Option<String>,
    /// The statement, shortened.
    pub snippet: String,
    /// relevance · φ.
    pub score: f64,
    /// Standing as of the query's instant: `current`, `superseded`, `open` or `answered`.
    #[schema(value_type = String, example = "current")]
    pub standing: Standing,
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
    /// The same statement in other sources (`SAME_STATEMENT`: the original and its copies).
    /// Search shows one memory object per statement, the best ranked; these are the others.
    pub restated_in: Vec<Restatement>,
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
    /// Its memory objects, its best chunk and its document-level BM25 fused
    /// ([`crate::fuse`]); by memory objects alone (best plus a tenth of the next two) when the
    /// chunk and document weights are 0, or for `as_of` and `types` searches.
    pub score: f64,
    /// Title.
    pub title: Option<String>,
    /// The best matching statement (or, without one, the best chunk's best passage).
    pub snippet: String,
    /// The matching memory objects, best first.
    pub memory_ids: Vec<String>,
    /// Which signal brought it and each one's part (`explain=true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<SourceExplain>,
}

/// Why a document ranks where it does (`level=source`, `explain=true`).
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct SourceExplain {
    /// `minmax`, `rrf`, or `memory` (memory objects alone).
    pub fusion: String,
    /// The signal with the largest part of the score: `memory`, `chunk`, `document` or `graph`.
    pub brought_by: String,
    /// Part of the score from its memory objects.
    pub memory: f64,
    /// Part from its best chunk (× φ).
    pub chunk: f64,
    /// Part from its document-level BM25 (× φ).
    pub document: f64,
    /// Part from the walk over the graph around the query (× φ).
    pub graph: f64,
    /// Rank of the document by each signal alone (memory, chunk, document, graph).
    pub ranks: [Option<usize>; 4],
    /// The strongest path by which the walk reached the document, from one of the best
    /// memory objects (seeds): each step's relationship and the node it reaches. Empty when
    /// the walk did not reach it (or it is a seed's own document).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub graph_path: Vec<PathStep>,
    /// φ of its best memory object (what the chunk and document parts are multiplied by).
    pub phi: f64,
    /// Its best chunk.
    pub best_chunk: Option<ChunkEvidence>,
    /// The document that replaced it, when its score was capped below that one's.
    pub capped_below: Option<String>,
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

fn result(r: &Ranked, at: Option<i64>, via: &str, explain: bool, intent: Intent) -> SearchResult {
    let view = AsOf { card: &r.card, at };
    SearchResult {
        id: r.card.id.clone(),
        source_id: r.card.source_id.clone(),
        memory_type: r.card.memory_type,
        title: r.card.title.clone(),
        snippet: snippet(&r.card.text, 300),
        score: r.score,
        standing: view.standing(),
        k: r.card.k,
        t_valid: r.card.t_valid,
        t_invalid: r.card.t_invalid,
        recorded_at: r.card.recorded_at,
        contradicts: view.contradicts().iter().map(|e| e.id.clone()).collect(),
        superseded_by: view.superseded_by().iter().map(|e| e.id.clone()).collect(),
        answered_by: view.answered_by().iter().map(|e| e.id.clone()).collect(),
        blocks: view.blocks().iter().map(|e| e.id.clone()).collect(),
        blocked_by: view.blocked_by().iter().map(|e| e.id.clone()).collect(),
        restated_in: r.card.restated.clone(),
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
                ("fate", intent.fate),
            ]
            .into_iter()
            .filter(|(_, on)| *on)
            .map(|(name, _)| name.to_string())
            .collect(),
        }),
    }
}

/// The top `k` memory results, one per statement (copies of a statement in other sources are
/// folded into the best ranked, which lists them in `restated_in`), each followed by the other
/// sides of its contradictions (which are returned together with it even beyond `k`).
pub fn memory_results(
    ranked: &[Ranked],
    related: &HashMap<String, MemoryCard>,
    query: &SearchQuery,
    explain: bool,
    rank: &RankConfig,
) -> Vec<SearchResult> {
    let intent = Intent::of(&query.text);
    let mut out = Vec::new();
    let mut shown: HashSet<String> = HashSet::new();
    for r in fold_restatements(ranked.iter(), |r| &r.card, query.k) {
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
                        memory_type: card.memory_type.name(),
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

/// The first `k` items of `ranked` (best first) that say different statements: an item whose
/// [`MemoryCard::statement`] an earlier item said is left out (its card is listed in the
/// earlier one's `restated`).
///
/// ```
/// use epigraph_query::graph::MemoryCard;
/// use epigraph_query::search::fold_restatements;
/// let card = |id: &str, restates: Option<&str>| MemoryCard {
///     id: id.into(),
///     restates: restates.map(String::from),
///     ..Default::default()
/// };
/// // m7 and m9 copy m1 (from other sources); m2 is another statement.
/// let ranked = [card("m7", Some("m1")), card("m1", None), card("m9", Some("m1")), card("m2", None)];
/// let kept: Vec<&str> = fold_restatements(ranked.iter(), |c| c, 2).map(|c| c.id.as_str()).collect();
/// assert_eq!(kept, ["m7", "m2"]);
/// ```
pub fn fold_restatements<'a, T: 'a>(
    ranked: impl Iterator<Item = &'a T> + 'a,
    card: impl Fn(&T) -> &MemoryCard + 'a,
    k: usize,
) -> impl Iterator<Item = &'a T> + 'a {
    let mut said: HashSet<String> = HashSet::new();
    ranked
        .filter(move |item| said.insert(card(item).statement().to_string()))
        .take(k)
}

/// The walk around a search's best memory objects ([`crate::expand`]).
#[derive(Clone, Debug, Default)]
pub struct Walk {
    /// The neighbourhood read.
    pub hood: Neighbourhood,
    /// Each node's walked mass.
    pub mass: HashMap<String, f64>,
    /// The strongest path to each reached node (asked for explain only).
    pub paths: HashMap<String, Vec<PathStep>>,
    /// Cards and φ of the best reached memory object of each document no retriever found
    /// (the most reached first, up to [`REACHED_CARDS`]), by memory id.
    pub reached: HashMap<String, (MemoryCard, f64)>,
}

/// Documents only the walk reached whose graph state is read (the rest keep φ = 1).
pub const REACHED_CARDS: usize = 50;

/// The identifiers a query names ([`crate::subjects::named`]) whose replacements put a
/// document below its successor: none when the query is unmodulated or asks about history.
///
/// ```
/// use epigraph_query::{retrieve::SearchQuery, search::subject_keys};
/// use epigraph_sinks::lance::SearchMode;
/// let query = |text: &str| SearchQuery {
///     text: text.into(), k: 10, types: vec![], as_of: None, include_superseded: true,
///     mode: SearchMode::Hybrid, candidates: 200, modulate: true,
/// };
/// assert_eq!(subject_keys(&query("Is Image.ANTIALIAS still there?")), ["antialias"]);
/// assert!(subject_keys(&query("What did Image.ANTIALIAS originally do?")).is_empty());
/// ```
pub fn subject_keys(query: &SearchQuery) -> Vec<String> {
    if query.modulate && !Intent::of(&query.text).history {
        crate::subjects::named(&query.text)
    } else {
        Vec::new()
    }
}

/// Documents ranked by their four signals fused ([`crate::fuse`]): memory objects (`ranked`,
/// best first), chunks, document-level BM25 and the graph `walk`; the top `k`. `replacements`
/// are the graph's statements of candidate documents replaced on an identifier the query
/// names ([`subject_keys`]), beyond the candidates.
pub fn fused_source_results(
    ranked: &[Ranked],
    chunks: &[ChunkHit],
    walk: Option<&Walk>,
    replacements: &[SubjectReplacement],
    query: &SearchQuery,
    rank: &RankConfig,
    explain: bool,
) -> Vec<SourceResult> {
    let subjects = subject_keys(query);
    let mut docs = fuse::documents(ranked, chunks, query.as_of, query.modulate, &subjects);
    fuse::add_subject_replacements(&mut docs, replacements);
    if let Some(walk) = walk {
        fuse::add_walk(&mut docs, &walk.hood, &walk.mass);
        let source_of = |id: &str| {
            walk.hood
                .nodes
                .get(id)
                .and_then(|n| n.source_id.clone())
                .or_else(|| {
                    ranked
                        .iter()
                        .find(|r| r.card.id == id)
                        .map(|r| r.card.source_id.clone())
                })
        };
        for doc in docs.iter_mut().filter(|d| d.members.is_empty()) {
            if let Some((card, phi)) = doc.graph_node.as_ref().and_then(|n| walk.reached.get(n)) {
                fuse::reached_state(doc, card, *phi, query.as_of, source_of);
            }
        }
    }
    fuse::fuse(&mut docs, rank.source_weights(), rank.source_fusion);
    if query.modulate && !Intent::of(&query.text).history {
        fuse::below_replacing_documents(&mut docs, rank.below_successor);
    }
    docs.truncate(query.k);
    docs.into_iter()
        .map(|doc| {
            let best = doc.members.first().map(|i| &ranked[*i]);
            let chunk = doc.best_chunk.map(|i| &chunks[i]);
            let reached =
                walk.and_then(|w| doc.graph_node.as_ref().and_then(|n| w.hood.nodes.get(n)));
            let snippet = match (best, chunk, reached) {
                (Some(best), _, _) => snippet(&best.card.text, 300),
                (None, Some(chunk), _) => context::excerpt(&chunk.text, &query.text, 300).1,
                (None, None, Some(node)) => {
                    snippet(node.text.as_deref().unwrap_or(&node.label), 300)
                }
                (None, None, None) => String::new(),
            };
            let graph_path = match (explain, walk, &doc.graph_node) {
                (true, Some(walk), Some(node)) if doc.contributions[3] > 0.0 => {
                    walk.paths.get(node).cloned().unwrap_or_default()
                }
                _ => Vec::new(),
            };
            SourceResult {
                title: best
                    .and_then(|b| b.card.title.clone())
                    .or_else(|| chunk.and_then(|c| c.title.clone()))
                    .or_else(|| reached.and_then(|n| n.title.clone())),
                snippet,
                memory_ids: doc
                    .members
                    .iter()
                    .map(|i| ranked[*i].card.id.clone())
                    .collect(),
                score: doc.score,
                explain: explain.then(|| SourceExplain {
                    fusion: match rank.source_fusion {
                        fuse::SourceFusion::Minmax => "minmax",
                        fuse::SourceFusion::Rrf => "rrf",
                    }
                    .to_string(),
                    brought_by: doc.brought_by().to_string(),
                    memory: doc.contributions[0],
                    chunk: doc.contributions[1],
                    document: doc.contributions[2],
                    graph: doc.contributions[3],
                    ranks: doc.ranks,
                    graph_path,
                    phi: doc.phi,
                    best_chunk: chunk.map(|c| ChunkEvidence {
                        id: c.id.clone(),
                        chunk_index: c.chunk_index,
                        bm25: c.bm25,
                        cosine: c.cosine,
                    }),
                    capped_below: doc.capped_below.clone(),
                }),
                source_id: doc.source_id,
            }
        })
        .collect()
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
                explain: None,
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

impl QueryService {
    pub(crate) fn check_query(&self, q: &str) -> Result<(), QueryError> {
        if q.trim().is_empty() {
            return Err(QueryError::invalid("q must not be empty"));
        }
        if q.chars().count() > self.config.max_query_chars {
            return Err(QueryError::invalid(format!(
                "q is longer than {} characters",
                self.config.max_query_chars
            )));
        }
        Ok(())
    }

    /// Build the core query of a search request.
    pub fn search_query(&self, params: &SearchParams) -> Result<SearchQuery, QueryError> {
        self.check_query(&params.q)?;
        let k = params.k.unwrap_or(10);
        if k == 0 || k > self.config.max_k {
            return Err(QueryError::invalid(format!(
                "k must be between 1 and {}",
                self.config.max_k
            )));
        }
        let level = params.level.unwrap_or_default();
        let candidates = match level {
            Level::Memory => (k * 5).clamp(50, 500),
            Level::Source => (k * 20).clamp(200, 1000),
            Level::Chunk => (k * 4).clamp(20, 400),
        };
        if level == Level::Chunk && (params.types.is_some() || params.as_of.is_some()) {
            return Err(QueryError::invalid(
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

    /// Hybrid retrieval modulated by graph state (OIDA Eq. 2) at the level asked for.
    pub async fn search(
        &self,
        tenant: &str,
        params: &SearchParams,
    ) -> Result<SearchResponse, QueryError> {
        let query = self.search_query(params)?;
        let level = params.level.unwrap_or_default();
        if level == Level::Chunk {
            let results = self
                .chunk_results(tenant, &query, params.explain.unwrap_or(false))
                .await?;
            return Ok(SearchResponse {
                query: params.q.clone(),
                tenant: tenant.to_string(),
                level,
                as_of: None,
                results: Results::Chunk(results),
            });
        }
        let (ranked, related) = self.rank(tenant, &query).await?;
        let results = match level {
            Level::Memory => {
                let results = memory_results(
                    &ranked,
                    &related,
                    &query,
                    params.explain.unwrap_or(false),
                    &self.config.rank,
                );
                self.report_usage(tenant, results.iter().map(|r| r.id.clone()).collect());
                Results::Memory(results)
            }
            Level::Source => {
                let rank = &self.config.rank;
                // Chunks hold today's text of every type: an `as_of` or `types` search ranks
                // documents by their memory objects alone.
                let memory_only = rank.source_weights().memory_only()
                    || query.as_of.is_some()
                    || !query.types.is_empty();
                let results = if memory_only {
                    source_results(&ranked, query.k)
                } else {
                    let weights = rank.source_weights();
                    let chunks = if weights.uses_chunks() {
                        self.lance
                            .search_chunks(&SearchRequest {
                                query: query.text.clone(),
                                k: query.candidates * 2,
                                tenant: tenant.to_string(),
                                mode: query.mode,
                                types: Vec::new(),
                                candidates: Some(query.candidates),
                            })
                            .await?
                    } else {
                        Vec::new()
                    };
                    let explain = params.explain.unwrap_or(false);
                    let walk = if weights.graph > 0.0 {
                        Some(self.walk(tenant, &ranked, &query, explain).await?)
                    } else {
                        None
                    };
                    let replacements = self.subject_replacements(tenant, &ranked, &query).await?;
                    fused_source_results(
                        &ranked,
                        &chunks,
                        walk.as_ref(),
                        &replacements,
                        &query,
                        rank,
                        explain,
                    )
                };
                self.report_usage(
                    tenant,
                    results
                        .iter()
                        .filter_map(|r| r.memory_ids.first().cloned())
                        .collect(),
                );
                Results::Source(results)
            }
            Level::Chunk => unreachable!("answered above"),
        };
        Ok(SearchResponse {
            query: params.q.clone(),
            tenant: tenant.to_string(),
            level,
            as_of: query.as_of.map(show_instant),
            results,
        })
    }

    /// The graph's replacements, on an identifier the query names, of statements of the
    /// documents of `ranked`
    /// ([`GraphReader::subject_replacements`](crate::graph::GraphReader::subject_replacements));
    /// none to read when the query names none ([`subject_keys`]).
    pub async fn subject_replacements(
        &self,
        tenant: &str,
        ranked: &[Ranked],
        query: &SearchQuery,
    ) -> Result<Vec<SubjectReplacement>, QueryError> {
        let keys = subject_keys(query);
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let mut seen: HashSet<&str> = HashSet::new();
        let members: Vec<String> = ranked
            .iter()
            .filter(|r| seen.insert(r.card.source_id.as_str()))
            .map(|r| r.card.id.clone())
            .collect();
        self.graph
            .subject_replacements(tenant, &members, &keys, query.as_of)
            .await
    }

    /// Walk the graph from the best `[serve.rank.walk] seeds` memory objects of `ranked`
    /// (personalisation: their score) and return what it reached.
    pub async fn walk(
        &self,
        tenant: &str,
        ranked: &[Ranked],
        query: &SearchQuery,
        explain: bool,
    ) -> Result<Walk, QueryError> {
        let config = &self.config.rank.walk;
        let seeds: Vec<(String, f64)> = ranked
            .iter()
            .take(config.seeds)
            .filter(|r| r.score > 0.0)
            .map(|r| (r.card.id.clone(), r.score))
            .collect();
        let ids: Vec<String> = seeds.iter().map(|(id, _)| id.clone()).collect();
        let now = chrono::Utc::now().timestamp_millis();
        let hood = self.graph.neighbourhood(tenant, &ids, config, now).await?;
        let mass = walked_mass(
            &hood,
            &seeds,
            config.restart,
            config.iterations,
            config.mention_weight,
        );
        let paths = if explain {
            best_paths(&hood, &seeds, config.hops + 1, config.mention_weight)
        } else {
            HashMap::new()
        };
        // The best reached memory object of each document no retriever found.
        let found: HashSet<&str> = ranked.iter().map(|r| r.card.source_id.as_str()).collect();
        let mut best: HashMap<&str, (&String, f64)> = HashMap::new();
        for (id, m) in &mass {
            let Some(node) = hood.nodes.get(id) else {
                continue;
            };
            let Some(source) = node.source_id.as_deref() else {
                continue;
            };
            if node.kind != NodeKind::Memory || found.contains(source) || *m <= 0.0 {
                continue;
            }
            let entry = best.entry(source).or_insert((id, *m));
            if *m > entry.1 || (*m == entry.1 && id < entry.0) {
                *entry = (id, *m);
            }
        }
        let mut wanted: Vec<(&String, f64)> = best.into_values().collect();
        wanted.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        let ids: Vec<String> = wanted
            .into_iter()
            .take(REACHED_CARDS)
            .map(|(id, _)| id.clone())
            .collect();
        let intent = Intent::of(&query.text);
        let reached = self
            .graph
            .memory_cards(tenant, &ids)
            .await?
            .into_iter()
            .map(|(id, card)| {
                let view = AsOf {
                    card: &card,
                    at: query.as_of,
                };
                let phi = if query.modulate {
                    self.config.rank.phi(&view, intent, None).passages
                } else {
                    1.0
                };
                (id, (card, phi))
            })
            .collect();
        Ok(Walk {
            hood,
            mass,
            paths,
            reached,
        })
    }

    /// Chunks of raw source text best matching the query (no graph state: chunks are Mind Graph's
    /// fallback for what extraction did not capture).
    pub async fn chunk_results(
        &self,
        tenant: &str,
        query: &SearchQuery,
        explain: bool,
    ) -> Result<Vec<ChunkResult>, QueryError> {
        let hits = self
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
}
