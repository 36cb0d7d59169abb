use std::collections::HashMap;

use futures::TryStreamExt;
use lance_index::scalar::FullTextSearchQuery;
use lancedb::DistanceType;
use lancedb::arrow::arrow_array::{Array, Float32Array, RecordBatch};
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use serde::Serialize;

use super::LanceSink;
use super::rows::{quote, string_column};
use crate::ConnectorError;

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

impl LanceSink {
    /// Hybrid search: BM25 and vector candidates fused by reciprocal rank, tenant-scoped; returns
    /// up to `candidates` fused hits (the caller re-ranks them with graph state and cuts to `k`).
    pub async fn search(&self, request: &SearchRequest) -> Result<Vec<SearchHit>, ConnectorError> {
        let candidates = request
            .candidates
            .unwrap_or(request.k.max(1) * CANDIDATE_FACTOR);
        let mut filter = format!("tenant = {}", quote(&request.tenant));
        if !request.types.is_empty() {
            let list: Vec<String> = request.types.iter().map(|t| quote(t)).collect();
            filter.push_str(&format!(" AND memory_type IN ({})", list.join(", ")));
        }
        let mut text_hits = Vec::new();
        if request.mode != SearchMode::Vector && !request.query.trim().is_empty() {
            let query = self
                .table
                .query()
                .full_text_search(FullTextSearchQuery::new(request.query.clone()))
                .only_if(&filter)
                .select(Select::columns(&with_score(COLUMNS, "_score")))
                .limit(candidates);
            let result: Result<Vec<RecordBatch>, lancedb::Error> =
                async { query.execute().await?.try_collect().await }.await;
            let batches = match result {
                Ok(batches) => batches,
                // Before the pipeline's first idle pass there is no full-text index yet: the
                // vector retriever answers alone.
                Err(error) if error.to_string().contains("INVERTED index") => Vec::new(),
                Err(error) => return Err(ConnectorError::lance("full-text search")(error)),
            };
            text_hits = hits_of(&batches, "_score", |s| s);
        }
        let mut vector_hits = Vec::new();
        if request.mode != SearchMode::Text
            && let Some(embedder) = self.embedder.clone()
        {
            let query = request.query.clone();
            let vector = tokio::task::spawn_blocking(move || embedder.embed(&[query.as_str()]))
                .await
                .map_err(|e| ConnectorError::Model(format!("embedding task: {e}")))??
                .pop()
                .unwrap_or_default();
            let batches: Vec<RecordBatch> = self
                .table
                .query()
                .nearest_to(vector.as_slice())
                .map_err(ConnectorError::lance("vector query"))?
                .distance_type(DistanceType::Cosine)
                .only_if(format!("{filter} AND vector IS NOT NULL"))
                .select(Select::columns(&with_score(COLUMNS, "_distance")))
                .limit(candidates)
                .execute()
                .await
                .map_err(ConnectorError::lance("vector search"))?
                .try_collect()
                .await
                .map_err(ConnectorError::lance("vector search"))?;
            vector_hits = hits_of(&batches, "_distance", |d| 1.0 - d);
        }
        Ok(fuse(text_hits, vector_hits, candidates))
    }
}

const COLUMNS: &[&str] = &["id", "source_id", "memory_type", "title", "text"];

/// The columns plus the retriever's score column, named explicitly (lance warns when a scored
/// query's projection leaves it implicit).
fn with_score(columns: &[&str], score: &str) -> Vec<String> {
    columns
        .iter()
        .map(|c| c.to_string())
        .chain([score.to_string()])
        .collect()
}

/// Hits in rank order, with the retriever's own score converted by `to_score`.
fn hits_of(
    batches: &[RecordBatch],
    score_column: &str,
    to_score: impl Fn(f32) -> f32,
) -> Vec<(SearchHit, f32)> {
    let mut hits = Vec::new();
    for batch in batches {
        let scores = batch
            .column_by_name(score_column)
            .and_then(|c| c.as_any().downcast_ref::<Float32Array>());
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

/// Reciprocal rank fusion of the two ranked lists; ties broken by id for determinism.
fn fuse(text: Vec<(SearchHit, f32)>, vector: Vec<(SearchHit, f32)>, k: usize) -> Vec<SearchHit> {
    let mut fused: HashMap<String, SearchHit> = HashMap::new();
    for (rank, (hit, bm25)) in text.into_iter().enumerate() {
        let entry = fused.entry(hit.id.clone()).or_insert(hit);
        entry.bm25 = Some(bm25);
        entry.text_rank = Some(rank + 1);
        entry.score += 1.0 / (RRF_K + rank as f32 + 1.0);
    }
    for (rank, (hit, cosine)) in vector.into_iter().enumerate() {
        let entry = fused.entry(hit.id.clone()).or_insert(hit);
        entry.cosine = Some(cosine);
        entry.vector_rank = Some(rank + 1);
        entry.score += 1.0 / (RRF_K + rank as f32 + 1.0);
    }
    let mut hits: Vec<SearchHit> = fused.into_values().collect();
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
    hits.truncate(k);
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(id: &str) -> SearchHit {
        SearchHit {
            id: id.into(),
            source_id: id.into(),
            memory_type: "NARRATIVE".into(),
            title: None,
            text: String::new(),
            score: 0.0,
            bm25: None,
            cosine: None,
            text_rank: None,
            vector_rank: None,
        }
    }

    #[test]
    fn items_found_by_both_retrievers_rank_first() {
        let text = vec![(hit("a"), 9.0), (hit("b"), 5.0)];
        let vector = vec![(hit("c"), 0.9), (hit("b"), 0.8)];
        let fused = fuse(text, vector, 3);
        assert_eq!(
            fused.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(),
            ["b", "a", "c"]
        );
        assert_eq!((fused[0].bm25, fused[0].cosine), (Some(5.0), Some(0.8)));
    }
}
