//! Vectors behind the rows: the embedding cache by text hash and the background filler.
//!
//! An epoch's rows are written at once, each with the vector of an earlier row (or recent text)
//! of the same `text_hash` when there is one and null otherwise; the full-text index finds them
//! immediately. [`VectorFiller`] then fills the null vectors in batches, **oldest written row
//! first**: the lag is bounded by the backlog (no row waits behind a stream of newer ones) and
//! the age of the oldest waiting row — a metric — falls as it works. Nothing about the backlog
//! lives only in memory: a row without a vector is found again by the next pass, by the next
//! run after a restart, or by [`LanceSink::backfill_vectors`].

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::TryStreamExt;
use lancedb::arrow::arrow_array::{
    Array, FixedSizeListArray, Float32Array, Int64Array, RecordBatch, RecordBatchIterator,
    StringArray,
};
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use tokio::sync::watch;
use tracing::{debug, warn};

use super::LanceSink;
use super::rows::{quote, string_column, text_hash};
use super::vector_cache::Target;
pub use super::vector_cache::VectorObserver;
use crate::SinkError;
use crate::embed::Embedder;

/// Ids per `IN (…)` filter.
const IN_CHUNK: usize = 500;

/// With the static table a pass takes this many times `embed_batch_rows` rows.
const STATIC_BATCH_FACTOR: usize = 32;

/// A chunk pass takes `embed_batch_rows / CHUNK_BATCH_DIVISOR` chunks.
const CHUNK_BATCH_DIVISOR: usize = 8;

/// `(text_hash, vector)` of every row of the batches that has a vector.
fn hashed_vectors(batches: &[RecordBatch]) -> Vec<(String, Vec<f32>)> {
    let mut out = Vec::new();
    for batch in batches {
        let (Some(hashes), Some(vectors)) = (
            string_column(batch, "text_hash"),
            batch
                .column_by_name("vector")
                .and_then(|c| c.as_any().downcast_ref::<FixedSizeListArray>()),
        ) else {
            continue;
        };
        for i in 0..batch.num_rows() {
            if vectors.is_null(i) {
                continue;
            }
            let values = vectors.value(i);
            if let Some(floats) = values.as_any().downcast_ref::<Float32Array>() {
                out.push((hashes.value(i).to_string(), floats.values().to_vec()));
            }
        }
    }
    out
}

/// One pass of the filler.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FillPass {
    /// Rows waiting for a vector when the pass began.
    pub pending: usize,
    /// Rows with another model's vector (a static backfill's) waiting to be upgraded when
    /// the pass began.
    pub upgrades: usize,
    /// Rows that got their vector in this pass (upgrades included).
    pub filled: usize,
    /// Of those, rows that had none.
    pub filled_missing: usize,
    /// Distinct texts run through the model.
    pub embedded: usize,
    /// Rows whose vector came from the cache.
    pub reused: usize,
}

/// Added to the write time of a row whose vector another model computed, so that every row
/// without a vector comes first in the filler's order.
const UPGRADE: i64 = 1 << 62;

impl LanceSink {
    pub(crate) fn target(&self, target: Target) -> &lancedb::Table {
        match target {
            Target::Memory => &self.table,
            Target::Chunks => &self.chunks,
        }
    }

    /// Vectors for `hashes` from the in-memory cache, then from rows of the target table (of
    /// this view) that have one. Hashes found in the table are added to the cache.
    pub(crate) async fn cached_vectors(
        &self,
        target: Target,
        hashes: &[String],
    ) -> Result<HashMap<String, Arc<Vec<f32>>>, SinkError> {
        let mut found = HashMap::new();
        let mut missing = Vec::new();
        {
            let mut cache = self.shared.cache.lock().expect("vector cache lock");
            for hash in hashes.iter().collect::<HashSet<_>>() {
                match cache.get(hash) {
                    Some(vector) => {
                        found.insert(hash.clone(), vector);
                    }
                    None => missing.push(hash.clone()),
                }
            }
        }
        for chunk in missing.chunks(IN_CHUNK) {
            let list = chunk
                .iter()
                .map(|h| quote(h))
                .collect::<Vec<_>>()
                .join(", ");
            let batches: Vec<RecordBatch> = self
                .target(target)
                .query()
                .only_if(format!(
                    "view = {} AND vector IS NOT NULL AND text_hash IN ({list})",
                    quote(&self.view)
                ))
                .select(Select::columns(&["text_hash", "vector"]))
                .execute()
                .await
                .map_err(SinkError::lance("looking up cached vectors"))?
                .try_collect()
                .await
                .map_err(SinkError::lance("looking up cached vectors"))?;
            let mut cache = self.shared.cache.lock().expect("vector cache lock");
            for (hash, vector) in hashed_vectors(&batches) {
                let vector = Arc::new(vector);
                cache.put(hash.clone(), vector.clone());
                found.insert(hash, vector);
            }
        }
        Ok(found)
    }

    /// The rows (of this view) the filler gives a vector: those without one and, when this
    /// sink embeds with the transformer, those whose vector another model computed (the static
    /// table of a bulk backfill), which are upgraded behind the rows that have none.
    fn needs_vector(&self) -> String {
        match &self.embedder {
            Some(embedder) if !embedder.is_static() => format!(
                "view = {} AND (vector IS NULL OR vector_model <> {})",
                quote(&self.view),
                quote(&self.model)
            ),
            _ => format!("view = {} AND vector IS NULL", quote(&self.view)),
        }
    }

    /// Ids and write times of the target's rows (of this view) waiting for a vector; a row
    /// with another model's vector is listed at [`UPGRADE`] + its write time, after every row
    /// without one.
    async fn waiting(
        &self,
        target: Target,
        filter: Option<&str>,
    ) -> Result<Vec<(i64, String)>, SinkError> {
        let mut condition = self.needs_vector();
        if let Some(filter) = filter {
            condition.push_str(&format!(" AND ({filter})"));
        }
        let batches: Vec<RecordBatch> = self
            .target(target)
            .query()
            .only_if(condition)
            .select(Select::columns(&["id", "written_at", "vector_model"]))
            .execute()
            .await
            .map_err(SinkError::lance("reading rows without vectors"))?
            .try_collect()
            .await
            .map_err(SinkError::lance("reading rows without vectors"))?;
        let mut waiting = Vec::new();
        for batch in &batches {
            let (Some(ids), Some(at), Some(models)) = (
                string_column(batch, "id"),
                batch
                    .column_by_name("written_at")
                    .and_then(|c| c.as_any().downcast_ref::<Int64Array>()),
                string_column(batch, "vector_model"),
            ) else {
                continue;
            };
            for i in 0..batch.num_rows() {
                let order = if models.is_null(i) {
                    at.value(i)
                } else {
                    UPGRADE.saturating_add(at.value(i))
                };
                waiting.push((order, ids.value(i).to_string()));
            }
        }
        Ok(waiting)
    }

    /// The given columns of the target's rows of these ids that still have no vector.
    async fn without_vectors(
        &self,
        target: Target,
        ids: &[String],
        columns: &[String],
    ) -> Result<Vec<RecordBatch>, SinkError> {
        let mut out = Vec::new();
        for chunk in ids.chunks(IN_CHUNK) {
            let list = chunk
                .iter()
                .map(|id| quote(id))
                .collect::<Vec<_>>()
                .join(", ");
            let batches: Vec<RecordBatch> = self
                .target(target)
                .query()
                .only_if(format!("{} AND id IN ({list})", self.needs_vector()))
                .select(Select::columns(columns))
                .execute()
                .await
                .map_err(SinkError::lance("reading rows without vectors"))?
                .try_collect()
                .await
                .map_err(SinkError::lance("reading rows without vectors"))?;
            out.extend(batches);
        }
        Ok(out)
    }

    /// One pass of the filler over one table: the `batch` oldest of the `waiting` rows
    /// (write time and id of rows without a vector) get one — from the cache when a row or recent text
    /// has the same hash, else from `vectorise` over their distinct texts — and are written
    /// back. Rows rewritten in between (another text) or deleted are left to the next pass.
    async fn fill_pass<V, F>(
        &self,
        target: Target,
        mut waiting: Vec<(i64, String)>,
        batch: usize,
        vectorise: &mut V,
    ) -> Result<FillPass, SinkError>
    where
        V: FnMut(Vec<String>) -> F,
        F: Future<Output = Result<Vec<Vec<f32>>, SinkError>>,
    {
        let mut pass = FillPass {
            pending: waiting.len(),
            ..FillPass::default()
        };
        if waiting.is_empty() {
            return Ok(pass);
        }
        waiting.sort_unstable();
        waiting.truncate(batch.max(1));
        let ids: Vec<String> = waiting.into_iter().map(|(_, id)| id).collect();
        let columns = ["id", "text"].map(String::from);
        let mut texts_by_hash: Vec<(String, String)> = Vec::new();
        for b in self.without_vectors(target, &ids, &columns).await? {
            let Some(texts) = string_column(&b, "text") else {
                continue;
            };
            for i in 0..b.num_rows() {
                // Under this sink's model: a row stamped by another one is upgraded.
                let text = texts.value(i);
                texts_by_hash.push((text_hash(&self.model, text), text.to_string()));
            }
        }
        let hashes: Vec<String> = texts_by_hash.iter().map(|(h, _)| h.clone()).collect();
        let mut vectors = self.cached_vectors(target, &hashes).await?;
        // Distinct texts the cache does not know, once each.
        let mut texts: Vec<(String, String)> = Vec::new();
        let mut seen = HashSet::new();
        for (hash, text) in texts_by_hash {
            if !vectors.contains_key(&hash) && seen.insert(hash.clone()) {
                texts.push((hash, text));
            }
        }
        if !texts.is_empty() {
            let started = Instant::now();
            let computed = vectorise(texts.iter().map(|(_, t)| t.clone()).collect()).await?;
            if computed.len() != texts.len() {
                return Err(SinkError::Model(format!(
                    "{} vectors for {} texts",
                    computed.len(),
                    texts.len()
                )));
            }
            let took = started.elapsed();
            pass.embedded = texts.len();
            if let Some(observer) = &self.observer {
                observer.embedded(texts.len(), took);
            }
            let mut cache = self.shared.cache.lock().expect("vector cache lock");
            for ((hash, _), vector) in texts.into_iter().zip(computed) {
                let vector = Arc::new(vector);
                cache.put(hash.clone(), vector.clone());
                vectors.insert(hash, vector);
            }
        }
        // Written under the sink's write lock, from a fresh read of every column: a row the
        // pipeline rewrote meanwhile keeps its new content (and gets its vector only if its
        // text is the same).
        let _write = self.shared.write.lock().await;
        let schema = target.schema();
        let columns: Vec<String> = schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .filter(|name| name != "vector")
            .collect();
        let now = epigraph_schemas::now_millis();
        let mut written = Vec::new();
        for fresh in self.without_vectors(target, &ids, &columns).await? {
            if let Some(b) = with_vectors(&fresh, &vectors, &schema, &self.model, now)? {
                pass.filled += b.num_rows();
                written.push(Ok(b));
            }
        }
        if written.is_empty() {
            return Ok(pass);
        }
        let mut merge = self.target(target).merge_insert(&["id"]);
        merge.when_matched_update_all(None);
        merge
            .execute(Box::new(RecordBatchIterator::new(written, schema)))
            .await
            .map_err(SinkError::lance("writing vectors"))?;
        pass.reused = pass.filled.saturating_sub(pass.embedded);
        if let Some(observer) = &self.observer
            && pass.reused > 0
        {
            observer.reused(pass.reused);
        }
        debug!(?target, ?pass, "vectors written");
        Ok(pass)
    }

    /// One pass of the filler: memory rows first (the unit of search), chunks once no memory
    /// row waits (an eighth of `batch` at a time: they are long). The backlog reported is both tables' (the age: the oldest row of either).
    pub(crate) async fn fill_next<V, F>(
        &self,
        filter: Option<&str>,
        batch: usize,
        vectorise: &mut V,
    ) -> Result<FillPass, SinkError>
    where
        V: FnMut(Vec<String>) -> F,
        F: Future<Output = Result<Vec<Vec<f32>>, SinkError>>,
    {
        let memory = self.waiting(Target::Memory, filter).await?;
        let chunks = self.waiting(Target::Chunks, filter).await?;
        if let Some(observer) = &self.observer {
            let now = epigraph_schemas::now_millis();
            let oldest = memory
                .iter()
                .chain(&chunks)
                .map(|(at, _)| *at)
                .filter(|at| *at < UPGRADE)
                .fold(now, i64::min);
            observer.backlog(
                memory.len() + chunks.len(),
                Duration::from_millis((now - oldest).max(0) as u64),
            );
        }
        let missing = |rows: &[(i64, String)]| rows.iter().filter(|(at, _)| *at < UPGRADE).count();
        let (memory_missing, chunks_missing) = (missing(&memory), missing(&chunks));
        let pending = memory_missing + chunks_missing;
        let upgrades = memory.len() + chunks.len() - pending;
        // A chunk is ~20 times a statement's length (up to the model's 256 word pieces, and
        // attention grows with length): an eighth of the batch keeps a chunk pass about as
        // long as a memory pass, so memory rows written meanwhile wait no longer.
        let chunk_batch = (batch / CHUNK_BATCH_DIVISOR).max(1);
        // Rows without a vector before upgrades; memory rows before chunks.
        let (target, rows, batch, missing_first) = if memory_missing > 0 {
            (Target::Memory, memory, batch, memory_missing)
        } else if chunks_missing > 0 {
            (Target::Chunks, chunks, chunk_batch, chunks_missing)
        } else if !memory.is_empty() {
            (Target::Memory, memory, batch, 0)
        } else {
            (Target::Chunks, chunks, chunk_batch, 0)
        };
        let pass = self.fill_pass(target, rows, batch, vectorise).await?;
        Ok(FillPass {
            pending,
            upgrades,
            // The oldest first: the rows without a vector were the first written back.
            filled_missing: pass.filled.min(missing_first.min(batch.max(1))),
            ..pass
        })
    }
}

/// The rows of `batch` (every column of `schema` but the vector) whose text has a vector under
/// `model`, with it, its text hash and model and a new `written_at`, in `schema`'s column
/// order; `None` when no row has one.
fn with_vectors(
    batch: &RecordBatch,
    vectors: &HashMap<String, Arc<Vec<f32>>>,
    schema: &lancedb::arrow::arrow_schema::SchemaRef,
    model: &str,
    now: i64,
) -> Result<Option<RecordBatch>, SinkError> {
    use lancedb::arrow::arrow_array::BooleanArray;
    use lancedb::arrow::arrow_array::types::Float32Type;
    use lancedb::arrow::arrow_select::filter::filter_record_batch;
    let arrow = |e: lancedb::arrow::arrow_schema::ArrowError| {
        SinkError::Model(format!("building a batch: {e}"))
    };
    let Some(texts) = string_column(batch, "text") else {
        return Ok(None);
    };
    let hashes: Vec<String> = (0..batch.num_rows())
        .map(|i| text_hash(model, texts.value(i)))
        .collect();
    let keep: BooleanArray = hashes
        .iter()
        .map(|h| Some(vectors.contains_key(h)))
        .collect();
    let kept = filter_record_batch(batch, &keep).map_err(arrow)?;
    if kept.num_rows() == 0 {
        return Ok(None);
    }
    let hashes: Vec<&String> = hashes.iter().filter(|h| vectors.contains_key(*h)).collect();
    let vector = FixedSizeListArray::from_iter_primitive::<Float32Type, _, _>(
        (0..kept.num_rows()).map(|i| {
            vectors
                .get(hashes[i])
                .map(|v| v.iter().map(|x| Some(*x)).collect::<Vec<_>>())
        }),
        crate::embed::DIMENSIONS as i32,
    );
    let mut columns: Vec<Arc<dyn Array>> = Vec::new();
    for field in schema.fields() {
        let column: Arc<dyn Array> = match field.name().as_str() {
            "vector" => Arc::new(vector.clone()),
            "written_at" => Arc::new(Int64Array::from(vec![now; kept.num_rows()])),
            "text_hash" => Arc::new(StringArray::from_iter_values(
                hashes.iter().map(|h| h.as_str()),
            )),
            "vector_model" => Arc::new(StringArray::from(vec![model; kept.num_rows()])),
            name => kept
                .column_by_name(name)
                .cloned()
                .ok_or_else(|| SinkError::Model(format!("column {name} was not read")))?,
        };
        columns.push(column);
    }
    RecordBatch::try_new(schema.clone(), columns)
        .map(Some)
        .map_err(arrow)
}

impl LanceSink {
    /// Start the background filler of this sink's rows without vectors (needs an embedder;
    /// `None` without one). One per pipeline; [`LanceSink::apply`] wakes it.
    pub fn spawn_vector_filler(&self) -> Option<VectorFiller> {
        let embedder = self.embedder.clone()?;
        let sink = self.clone();
        let (status_tx, status) = watch::channel(FillerStatus::default());
        // A pass costs a few table reads and one write whatever the embedder: with the static
        // table (≈ 13,000 sentences/s) that cost, not the embedding, limits a backfill, so its
        // passes are larger.
        let batch = self.shared.config.embed_batch_rows.max(1)
            * if embedder.is_static() {
                STATIC_BATCH_FACTOR
            } else {
                1
            };
        let task = tokio::spawn(async move {
            let mut vectorise = |texts: Vec<String>| embed_blocking(embedder.clone(), texts);
            let mut passes = 0u64;
            let mut filled = 0u64;
            loop {
                // Registered before the pass, so a write during the pass wakes the next one.
                let woken = sink.shared.wake.notified();
                let outcome = sink.fill_next(None, batch, &mut vectorise).await;
                passes += 1;
                let rest = match &outcome {
                    Ok(pass) => {
                        filled += pass.filled as u64;
                        let upgraded = pass.filled - pass.filled_missing;
                        status_tx.send_replace(FillerStatus {
                            passes,
                            pending: pass.pending.saturating_sub(pass.filled_missing),
                            upgrading: pass.upgrades.saturating_sub(upgraded),
                            filled,
                            error: None,
                            retryable: false,
                        });
                        (pass.pending == 0 && pass.upgrades == 0).then_some(Duration::from_secs(2))
                    }
                    Err(error) => {
                        warn!(%error, "filling vectors failed; retrying");
                        status_tx.send_replace(FillerStatus {
                            passes,
                            pending: usize::MAX,
                            upgrading: usize::MAX,
                            filled,
                            error: Some(error.to_string()),
                            retryable: error.retryable(),
                        });
                        Some(Duration::from_secs(1))
                    }
                };
                if let Some(rest) = rest {
                    // Until woken by a write, or a while (to refresh the backlog's age).
                    let _ = tokio::time::timeout(rest, woken).await;
                }
            }
        });
        Some(VectorFiller {
            task,
            wake: self.shared.clone(),
            status,
        })
    }

    /// Rows whose vector is still missing (written without an embedder, or before the vectors
    /// caught up) get one: up to `batch` rows at a time, oldest first, from the cache where the
    /// same text has a vector, else from `vectorise` over their distinct texts; written back
    /// by id, until none is left. Returns how many rows were filled. Safe while the pipeline
    /// writes: a row rewritten in between keeps its new content.
    pub async fn backfill_vectors<F>(
        &self,
        filter: Option<&str>,
        batch: usize,
        mut vectorise: F,
    ) -> Result<usize, SinkError>
    where
        F: FnMut(&[&str]) -> Result<Vec<Vec<f32>>, SinkError>,
    {
        let mut filled = 0;
        let mut compute = |texts: Vec<String>| {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            std::future::ready(vectorise(&refs))
        };
        loop {
            let pass = self.fill_next(filter, batch, &mut compute).await?;
            if pass.pending == 0 || pass.filled == 0 {
                return Ok(filled);
            }
            filled += pass.filled;
        }
    }
}

/// Runs the model on a blocking thread.
async fn embed_blocking(
    embedder: Arc<Embedder>,
    texts: Vec<String>,
) -> Result<Vec<Vec<f32>>, SinkError> {
    tokio::task::spawn_blocking(move || {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        embedder.embed(&refs)
    })
    .await
    .map_err(|e| SinkError::Model(format!("embedding task: {e}")))?
}

/// What the filler reported after its last pass.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FillerStatus {
    /// Passes so far.
    pub passes: u64,
    /// Rows left waiting after the last pass (`usize::MAX` after a failed one).
    pub pending: usize,
    /// Rows with another model's vector left to upgrade after the last pass.
    pub upgrading: usize,
    /// Rows filled since the filler started.
    pub filled: u64,
    /// The last pass's error, if it failed.
    pub error: Option<String>,
    /// Whether that error was an outage (the folder or store unreachable, a retry may help).
    pub retryable: bool,
}

/// The background task filling vectors behind the rows (see the module docs). Stopped when
/// dropped.
#[derive(Debug)]
pub struct VectorFiller {
    task: tokio::task::JoinHandle<()>,
    wake: Arc<super::sink::Shared>,
    status: watch::Receiver<FillerStatus>,
}

impl VectorFiller {
    /// The status after the last pass.
    pub fn status(&self) -> FillerStatus {
        self.status.borrow().clone()
    }

    /// Waits until a pass that began after this call finds nothing left to fill (every row
    /// written so far has its vector). Fails with the error of a failed pass.
    pub async fn drained(&mut self) -> Result<(), SinkError> {
        self.wait_for(|status| status.pending == 0).await
    }

    /// Wait until every row has a vector of this sink's model: no row without one and none
    /// left to upgrade from a static backfill.
    pub async fn upgraded(&mut self) -> Result<(), SinkError> {
        self.wait_for(|status| status.pending == 0 && status.upgrading == 0)
            .await
    }

    async fn wait_for(&mut self, done: impl Fn(&FillerStatus) -> bool) -> Result<(), SinkError> {
        let start = self.status.borrow_and_update().passes;
        self.wake.wake.notify_one();
        loop {
            self.status
                .changed()
                .await
                .map_err(|_| SinkError::Model("the vector filler stopped".into()))?;
            let status = self.status.borrow_and_update().clone();
            if let Some(reason) = status.error {
                return Err(SinkError::Filler {
                    reason,
                    retryable: status.retryable,
                });
            }
            // The first pass after `start` may have begun before the call: wait for one more.
            if status.passes > start + 1 && done(&status) {
                return Ok(());
            }
            if done(&status) {
                self.wake.wake.notify_one();
            }
        }
    }
}

impl Drop for VectorFiller {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
mod tests;
