use std::collections::HashMap;

use futures::TryStreamExt;
use lance_index::scalar::FullTextSearchQuery;
use lancedb::DistanceType;
use lancedb::arrow::arrow_array::{Array, Float32Array, Int64Array, RecordBatch};
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use serde::Serialize;

use super::LanceSink;
use super::rows::{quote, string_column};
use crate::SinkError;

/// Reciprocal-rank-fusion constant (the usual 60).
const RRF_K: f32 = 60.0;
/// Each retriever fetches this many times `k` candidates before fusion.
const CANDIDATE_FACTOR: usize = 4;

/// Which retrievers answer a search.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// BM25 over the full-text index only.
    Text,
    /// Cosine similarity of embeddings only.
    Vector,
    /// Both, fused by reciprocal rank (the default).
    Hybrid,
}

/// A search over the `memory` table.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchRequest {
    /// The query text.
    pub query: String,
    /// How many results.
    pub k: usize,
    /// Only rows of this tenant (validated by the caller).
    pub tenant: String,
    /// Retrievers to use.
    pub mode: SearchMode,
    /// Only these epistemic types (`DECISION`, …); empty for all.
    pub types: Vec<String>,
    /// Candidates each retriever fetches before fusion (default: four times `k`).
    pub candidates: Option<usize>,
}

/// One result with its score components.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SearchHit {
    /// Memory object id.
    pub id: String,
    /// Source item id.
    pub source_id: String,
    /// Epistemic type.
    pub memory_type: String,
    /// Title of the source.
    pub title: Option<String>,
    /// The object's text.
    pub text: String,
    /// Fused score (higher is better).
    pub score: f32,
    /// BM25 score, when the full-text retriever found it.
    pub bm25: Option<f32>,
    /// Cosine similarity, when the vector retriever found it.
    pub cosine: Option<f32>,
    /// Rank (from 1) in the full-text list.
    pub text_rank: Option<usize>,
    /// Rank (from 1) in the vector list.
    pub vector_rank: Option<usize>,
}

/// One chunk of source text found by [`LanceSink::search_chunks`] (Mind Graph's naive-chunk
/// fallback: the raw text, for what the extractor did not turn into memory objects).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChunkHit {
    /// Chunk id.
    pub id: String,
    /// Source item id.
    pub source_id: String,
    /// Title of the source.
    pub title: Option<String>,
    /// Position of the chunk in its source version, from 0.
    pub chunk_index: i64,
    /// Character span of the chunk in the source body.
    pub char_start: i64,
    /// End of the span (exclusive).
    pub char_end: i64,
    /// The chunk's text (about 1,200 tokens).
    pub text: String,
    /// Fused score (higher is better).
    pub score: f32,
    /// BM25 score, when the full-text retriever found it.
    pub bm25: Option<f32>,
    /// Cosine similarity, when the vector retriever found it.
    pub cosine: Option<f32>,
    /// Rank (from 1) in the full-text list.
    pub text_rank: Option<usize>,
    /// Rank (from 1) in the vector list.
    pub vector_rank: Option<usize>,
}

/// Both retrievers' ranked record batches of one table: the vector retriever's once per
/// model whose vectors the table holds.
struct Retrieved {
    text: Vec<RecordBatch>,
    vector: Vec<Vec<RecordBatch>>,
}

/// Several ranked lists as one: first of each, then second of each, …
fn interleave<T>(lists: Vec<Vec<T>>) -> Vec<T> {
    let mut iters: Vec<_> = lists.into_iter().map(Vec::into_iter).collect();
    let mut out = Vec::new();
    loop {
        let before = out.len();
        for it in &mut iters {
            out.extend(it.next());
        }
        if out.len() == before {
            return out;
        }
    }
}

impl LanceSink {
    /// Hybrid search: BM25 and vector candidates fused by reciprocal rank, tenant-scoped; returns
    /// up to `candidates` fused hits (the caller re-ranks them with graph state and cuts to `k`).
    pub async fn search(&self, request: &SearchRequest) -> Result<Vec<SearchHit>, SinkError> {
        let candidates = request
            .candidates
            .unwrap_or(request.k.max(1) * CANDIDATE_FACTOR);
        let mut filter = format!("tenant = {}", quote(&request.tenant));
        if !request.types.is_empty() {
            let list: Vec<String> = request.types.iter().map(|t| quote(t)).collect();
            filter.push_str(&format!(" AND memory_type IN ({})", list.join(", ")));
        }
        let retrieved = self
            .retrieve(&self.table, request, &filter, COLUMNS, candidates)
            .await?;
        Ok(fused_hits(&retrieved, hits_of, candidates))
    }

    /// The same hybrid search over the `chunks` table (source text in ~1,200-token chunks):
    /// up to `k` chunks of the tenant, best first. `types` does not apply to chunks.
    pub async fn search_chunks(&self, request: &SearchRequest) -> Result<Vec<ChunkHit>, SinkError> {
        let k = request.k.max(1);
        let candidates = request.candidates.unwrap_or(k * CANDIDATE_FACTOR);
        let filter = format!("tenant = {}", quote(&request.tenant));
        let retrieved = self
            .retrieve(&self.chunks, request, &filter, CHUNK_COLUMNS, candidates)
            .await?;
        Ok(fused_hits(&retrieved, chunk_hits_of, k))
    }

    /// BM25 and vector candidates of `table` under `filter`, with `columns` and the score.
    async fn retrieve(
        &self,
        table: &lancedb::Table,
        request: &SearchRequest,
        filter: &str,
        columns: &[&str],
        candidates: usize,
    ) -> Result<Retrieved, SinkError> {
        let mut retrieved = Retrieved {
            text: Vec::new(),
            vector: Vec::new(),
        };
        if request.mode != SearchMode::Vector && !request.query.trim().is_empty() {
            let query = table
                .query()
                .full_text_search(FullTextSearchQuery::new(request.query.clone()))
                .only_if(filter)
                .select(Select::columns(&with_score(columns, "_score")))
                .limit(candidates);
            let result: Result<Vec<RecordBatch>, lancedb::Error> =
                async { query.execute().await?.try_collect().await }.await;
            retrieved.text = match result {
                Ok(batches) => batches,
                // Before the pipeline's first idle pass there is no full-text index yet: the
                // vector retriever answers alone.
                Err(error) if error.to_string().contains("INVERTED index") => Vec::new(),
                Err(error) => return Err(SinkError::lance("full-text search")(error)),
            };
        }
        if request.mode != SearchMode::Text
            && let Some(embedder) = self.embedder.clone()
        {
            // One vector search per model: the query embedded by each, against its rows.
            let mut models = vec![embedder];
            let others = self
                .shared
                .other_models
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            for other in others {
                if self.holds_vectors_of(table, other.model_id()).await? {
                    models.push(other);
                }
            }
            let several = models.len() > 1;
            for embedder in models {
                let only = if several {
                    format!("{filter} AND vector_model = {}", quote(embedder.model_id()))
                } else {
                    format!("{filter} AND vector IS NOT NULL")
                };
                let query = request.query.clone();
                let vector = tokio::task::spawn_blocking(move || embedder.embed(&[query.as_str()]))
                    .await
                    .map_err(|e| SinkError::Model(format!("embedding task: {e}")))??
                    .pop()
                    .unwrap_or_default();
                let batches: Vec<RecordBatch> = table
                    .query()
                    .nearest_to(vector.as_slice())
                    .map_err(SinkError::lance("vector query"))?
                    .distance_type(DistanceType::Cosine)
                    .only_if(only)
                    .select(Select::columns(&with_score(columns, "_distance")))
                    .limit(candidates)
                    .execute()
                    .await
                    .map_err(SinkError::lance("vector search"))?
                    .try_collect()
                    .await
                    .map_err(SinkError::lance("vector search"))?;
                retrieved.vector.push(batches);
            }
        }
        Ok(retrieved)
    }
}

const COLUMNS: &[&str] = &["id", "source_id", "memory_type", "title", "text"];
const CHUNK_COLUMNS: &[&str] = &[
    "id",
    "source_id",
    "title",
    "chunk_index",
    "char_start",
    "char_end",
    "text",
];

/// The columns plus the retriever's score column, named explicitly (lance warns when a scored
/// query's projection leaves it implicit).
fn with_score(columns: &[&str], score: &str) -> Vec<String> {
    columns
        .iter()
        .map(|c| c.to_string())
        .chain([score.to_string()])
        .collect()
}

fn scores<'a>(batch: &'a RecordBatch, column: &str) -> Option<&'a Float32Array> {
    batch
        .column_by_name(column)
        .and_then(|c| c.as_any().downcast_ref::<Float32Array>())
}

/// Hits in rank order, with the retriever's own score converted by `to_score`.
fn hits_of(
    batches: &[RecordBatch],
    score_column: &str,
    to_score: fn(f32) -> f32,
) -> Vec<(SearchHit, f32)> {
    let mut hits = Vec::new();
    for batch in batches {
        let scores = scores(batch, score_column);
        let (Some(ids), Some(sources), Some(types), Some(titles), Some(texts)) = (
            string_column(batch, "id"),
            string_column(batch, "source_id"),
            string_column(batch, "memory_type"),
            string_column(batch, "title"),
            string_column(batch, "text"),
        ) else {
            continue;
        };
        for i in 0..batch.num_rows() {
            let raw = scores.map(|s| s.value(i)).unwrap_or_default();
            let hit = SearchHit {
                id: ids.value(i).to_string(),
                source_id: sources.value(i).to_string(),
                memory_type: types.value(i).to_string(),
                title: (!titles.is_null(i)).then(|| titles.value(i).to_string()),
                text: texts.value(i).to_string(),
                score: 0.0,
                bm25: None,
                cosine: None,
                text_rank: None,
                vector_rank: None,
            };
            hits.push((hit, to_score(raw)));
        }
    }
    hits
}

/// Chunk hits in rank order, with the retriever's own score converted by `to_score`.
fn chunk_hits_of(
    batches: &[RecordBatch],
    score_column: &str,
    to_score: fn(f32) -> f32,
) -> Vec<(ChunkHit, f32)> {
    let mut hits = Vec::new();
    for batch in batches {
        let scores = scores(batch, score_column);
        let int = |name: &str| {
            batch
                .column_by_name(name)
                .and_then(|c| c.as_any().downcast_ref::<Int64Array>().cloned())
        };
        let (Some(ids), Some(sources), Some(titles), Some(texts)) = (
            string_column(batch, "id"),
            string_column(batch, "source_id"),
            string_column(batch, "title"),
            string_column(batch, "text"),
        ) else {
            continue;
        };
        let (Some(index), Some(start), Some(end)) =
            (int("chunk_index"), int("char_start"), int("char_end"))
        else {
            continue;
        };
        for i in 0..batch.num_rows() {
            let raw = scores.map(|s| s.value(i)).unwrap_or_default();
            let hit = ChunkHit {
                id: ids.value(i).to_string(),
                source_id: sources.value(i).to_string(),
                title: (!titles.is_null(i)).then(|| titles.value(i).to_string()),
                chunk_index: index.value(i),
                char_start: start.value(i),
                char_end: end.value(i),
                text: texts.value(i).to_string(),
                score: 0.0,
                bm25: None,
                cosine: None,
                text_rank: None,
                vector_rank: None,
            };
            hits.push((hit, to_score(raw)));
        }
    }
    hits
}

/// A hit of either table, as reciprocal-rank fusion sees it.
trait Hit: Clone {
    fn id(&self) -> &str;
    fn scored(&mut self, fused: &Fused);
}

/// [`Hit`] for result types that carry an `id` and the fused score fields.
macro_rules! impl_hit {
    ($($hit:ty),*) => {$(
        impl Hit for $hit {
            fn id(&self) -> &str {
                &self.id
            }
            fn scored(&mut self, fused: &Fused) {
                self.score = fused.score;
                (self.bm25, self.cosine) = (fused.bm25, fused.cosine);
                (self.text_rank, self.vector_rank) = (fused.text_rank, fused.vector_rank);
            }
        }
    )*};
}
impl_hit!(SearchHit, ChunkHit);

/// Reads a retriever's batches into ranked hits, converting its score column.
type ReadHits<H> = fn(&[RecordBatch], &str, fn(f32) -> f32) -> Vec<(H, f32)>;

/// The hits `read` finds in both retrievers' batches (the vector lists of several models
/// interleaved), fused by reciprocal rank: up to `k`, with their scores and ranks.
fn fused_hits<H: Hit>(retrieved: &Retrieved, read: ReadHits<H>, k: usize) -> Vec<H> {
    let text = read(&retrieved.text, "_score", |s| s);
    let vector = interleave(
        retrieved
            .vector
            .iter()
            .map(|batches| read(batches, "_distance", |d| 1.0 - d))
            .collect(),
    );
    let ranked = |hits: &[(H, f32)]| -> Vec<(String, f32)> {
        hits.iter().map(|(h, s)| (h.id().to_string(), *s)).collect()
    };
    let mut by_id: HashMap<String, H> = text
        .iter()
        .chain(&vector)
        .map(|(hit, _)| (hit.id().to_string(), hit.clone()))
        .collect();
    fuse(&ranked(&text), &ranked(&vector), k)
        .into_iter()
        .filter_map(|fused| {
            let mut hit = by_id.remove(&fused.id)?;
            hit.scored(&fused);
            Some(hit)
        })
        .collect()
}

/// One id of the fused list with its scores.
#[derive(Clone, Debug, Default, PartialEq)]
struct Fused {
    id: String,
    score: f32,
    bm25: Option<f32>,
    cosine: Option<f32>,
    text_rank: Option<usize>,
    vector_rank: Option<usize>,
}

/// Reciprocal rank fusion of the two ranked `(id, score)` lists; ties broken by id for
/// determinism.
fn fuse(text: &[(String, f32)], vector: &[(String, f32)], k: usize) -> Vec<Fused> {
    let mut fused: HashMap<&str, Fused> = HashMap::new();
    for (rank, (id, bm25)) in text.iter().enumerate() {
        let entry = fused.entry(id).or_insert_with(|| Fused {
            id: id.clone(),
            ..Fused::default()
        });
        entry.bm25 = Some(*bm25);
        entry.text_rank = Some(rank + 1);
        entry.score += 1.0 / (RRF_K + rank as f32 + 1.0);
    }
    for (rank, (id, cosine)) in vector.iter().enumerate() {
        let entry = fused.entry(id).or_insert_with(|| Fused {
            id: id.clone(),
            ..Fused::default()
        });
        entry.cosine = Some(*cosine);
        entry.vector_rank = Some(rank + 1);
        entry.score += 1.0 / (RRF_K + rank as f32 + 1.0);
    }
    let mut hits: Vec<Fused> = fused.into_values().collect();
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
    hits.truncate(k);
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranked(list: &[(&str, f32)]) -> Vec<(String, f32)> {
        list.iter().map(|(id, s)| (id.to_string(), *s)).collect()
    }

    #[test]
    fn ranked_lists_of_several_models_interleave() {
        assert_eq!(interleave(vec![vec![1, 3], vec![2, 4, 5]]), [1, 2, 3, 4, 5]);
        assert_eq!(interleave::<u8>(vec![]), Vec::<u8>::new());
    }

    #[test]
    fn items_found_by_both_retrievers_rank_first() {
        let text = ranked(&[("a", 9.0), ("b", 5.0)]);
        let vector = ranked(&[("c", 0.9), ("b", 0.8)]);
        let fused = fuse(&text, &vector, 3);
        assert_eq!(
            fused.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(),
            ["b", "a", "c"]
        );
        assert_eq!((fused[0].bm25, fused[0].cosine), (Some(5.0), Some(0.8)));
        assert_eq!(
            (fused[0].text_rank, fused[0].vector_rank),
            (Some(2), Some(2))
        );
        assert_eq!(fuse(&text, &vector, 1).len(), 1);
    }
}
