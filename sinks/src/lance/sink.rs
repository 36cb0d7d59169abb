use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::TryStreamExt;
use lancedb::arrow::arrow_array::{RecordBatch, RecordBatchIterator};
use lancedb::database::CreateTableMode;
use lancedb::index::Index;
use lancedb::index::scalar::{BTreeIndexBuilder, FtsIndexBuilder};
use lancedb::index::vector::IvfHnswSqIndexBuilder;
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use lancedb::table::{CompactionOptions, OptimizeAction, OptimizeOptions};
use lancedb::{Connection, DistanceType, Table, connect};
use tokio::sync::Notify;
use tracing::{debug, info};

use super::LanceConfig;
use super::chunks::{ChunkRow, chunk_batch, chunks_schema};
use super::rows::{MemoryRow, Stamp, memory_schema, quote, string_column, text_hash, to_batch};
use super::vector_cache::{Target, VectorCache, VectorObserver};
use crate::SinkError;
use crate::embed::{EmbedConfig, Embedder};

/// Name of the vector index on `memory.vector`.
const VECTOR_INDEX: &str = "vector_idx";

/// What the clones of one sink share.
#[derive(Debug)]
pub(crate) struct Shared {
    /// Held by every write (epochs, vectors, compaction), so they never race on a row.
    pub(crate) write: tokio::sync::Mutex<()>,
    /// Vectors by text hash.
    pub(crate) cache: std::sync::Mutex<VectorCache>,
    /// Wakes the vector filler when rows without vectors were written.
    pub(crate) wake: Notify,
    /// Rows with vectors the vector index of `memory` and of `chunks` was last trained on
    /// (0: no index known).
    pub(crate) trained_on: [AtomicUsize; 2],
    /// Embedders of vectors other models left in the tables (the static table of a bulk
    /// backfill, until the filler upgraded them): searches embed the query with each too.
    pub(crate) other_models: std::sync::RwLock<Vec<Arc<Embedder>>>,
    /// Whether a table holds vectors of a model, by table and model id, and when that was read
    /// (see [`LanceSink::holds_vectors_of`]).
    pub(crate) model_presence: std::sync::Mutex<HashMap<(String, String), (Instant, bool)>>,
    pub(crate) config: LanceConfig,
}

/// What [`LanceSink::compact`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Compaction {
    /// Fragments rewritten into larger ones.
    pub fragments_removed: usize,
    /// Fragments written.
    pub fragments_added: usize,
    /// Old versions removed.
    pub versions_removed: u64,
}

/// Writes memory objects to the `memory` table and answers searches over it.
///
/// Every row carries the `view` (topic prefix) of the pipeline that wrote it; reconciliation
/// and clearing only see their own view, so pipelines of different prefixes can share a
/// folder.
#[derive(Clone)]
pub struct LanceSink {
    #[allow(dead_code)]
    db: Connection,
    pub(crate) table: Table,
    /// The `chunks` table.
    pub(crate) chunks: Table,
    pub(crate) embedder: Option<Arc<Embedder>>,
    pub(crate) view: String,
    /// Id of the vectors' model, hashed with each text (`text_hash`).
    pub(crate) model: String,
    pub(crate) shared: Arc<Shared>,
    pub(crate) observer: Option<Arc<dyn VectorObserver>>,
}

impl std::fmt::Debug for LanceSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LanceSink")
            .field("embeds", &self.embedder.is_some())
            .finish()
    }
}

impl LanceSink {
    /// The vectors already known for these texts (cache or a row with the same text hash),
    /// `None` where the filler will have to embed; all `None` without an embedder.
    async fn known_vectors(
        &self,
        target: Target,
        texts: &[&str],
    ) -> Result<Vec<Option<Vec<f32>>>, SinkError> {
        if texts.is_empty() || self.embedder.is_none() {
            return Ok(vec![None; texts.len()]);
        }
        let hashes: Vec<String> = texts.iter().map(|t| text_hash(&self.model, t)).collect();
        let cached = self.cached_vectors(target, &hashes).await?;
        Ok(hashes
            .iter()
            .map(|h| cached.get(h).map(|v| v.as_ref().clone()))
            .collect())
    }

    /// After rows were written with these vectors: count the reused ones and wake the filler
    /// when some are missing; returns how many wait for a vector.
    fn written(&self, vectors: &[Option<Vec<f32>>]) -> usize {
        let waiting = vectors.iter().filter(|v| v.is_none()).count();
        if let Some(observer) = &self.observer
            && self.embedder.is_some()
            && waiting < vectors.len()
        {
            observer.reused(vectors.len() - waiting);
        }
        if waiting > 0 {
            self.shared.wake.notify_one();
        }
        waiting
    }
}

/// Deletes the rows with these ids, 500 to a statement.
async fn delete_ids(table: &Table, ids: &[String], what: &str) -> Result<(), SinkError> {
    for chunk in ids.chunks(500) {
        let list = chunk
            .iter()
            .map(|id| quote(id))
            .collect::<Vec<_>>()
            .join(", ");
        table
            .delete(format!("id IN ({list})").as_str())
            .await
            .map_err(SinkError::lance(format!("deleting {what}")))?;
    }
    Ok(())
}

/// Inserts a batch, replacing the rows of the same ids (`merge_insert` on `id`).
async fn upsert_by_id(
    table: &Table,
    batch: RecordBatch,
    schema: lancedb::arrow::arrow_schema::SchemaRef,
    what: &str,
) -> Result<(), SinkError> {
    let mut merge = table.merge_insert(&["id"]);
    merge
        .when_matched_update_all(None)
        .when_not_matched_insert_all();
    merge
        .execute(Box::new(RecordBatchIterator::new(vec![Ok(batch)], schema)))
        .await
        .map_err(SinkError::lance(format!("upserting {what}")))?;
    Ok(())
}

/// Opens (or creates) a table. One of an older schema is dropped and created anew when
/// `migrate` (a view is rebuildable: the next run's reconciliation refills it); a reader
/// (`migrate = false`, the query service) refuses it instead, so that a newer `serve` never
/// drops the tables an older pipeline is writing.
async fn open_table(
    db: &Connection,
    name: &str,
    schema: lancedb::arrow::arrow_schema::SchemaRef,
    migrate: bool,
) -> Result<Table, SinkError> {
    let create = || async {
        db.create_empty_table(name, schema.clone())
            .mode(CreateTableMode::exist_ok(|req| req))
            .execute()
            .await
            .map_err(SinkError::lance(format!("opening the {name} table")))
    };
    let names = |s: &lancedb::arrow::arrow_schema::Schema| -> Vec<String> {
        s.fields().iter().map(|f| f.name().clone()).collect()
    };
    match db.open_table(name).execute().await {
        Ok(table) => {
            let found = table.schema().await.map_err(SinkError::lance(format!(
                "reading the {name} table's schema"
            )))?;
            if names(&found) == names(&schema) {
                return Ok(table);
            }
            if !migrate {
                return Err(SinkError::Config(format!(
                    "the LanceDB table {name} has another schema ({} columns, this build expects {}): \
                     run `epigraph run` of this version once to migrate it (the view is rebuilt \
                     from the topics), then start `epigraph serve` again",
                    found.fields().len(),
                    schema.fields().len()
                )));
            }
            tracing::warn!(
                table = %name,
                "the table has an older schema: it is recreated, and `epigraph run` refills it"
            );
            db.drop_table(name, &[])
                .await
                .map_err(SinkError::lance(format!(
                    "dropping the outdated {name} table"
                )))?;
            create().await
        }
        Err(_) => create().await,
    }
}

impl LanceSink {
    /// Open (or create) the `memory` and `chunks` tables. Without an embedder rows are stored with null
    /// vectors and only full-text search finds them.
    pub async fn open(
        config: &LanceConfig,
        embedder: Option<Arc<Embedder>>,
    ) -> Result<Self, SinkError> {
        Self::open_with(config, embedder, true).await
    }

    /// [`LanceSink::open`] for a reader (the query service): tables of another schema are an
    /// error, never dropped.
    pub async fn open_reader(
        config: &LanceConfig,
        embedder: Option<Arc<Embedder>>,
    ) -> Result<Self, SinkError> {
        Self::open_with(config, embedder, false).await
    }

    async fn open_with(
        config: &LanceConfig,
        embedder: Option<Arc<Embedder>>,
        migrate: bool,
    ) -> Result<Self, SinkError> {
        let db = connect(&config.dir)
            .read_consistency_interval(std::time::Duration::from_millis(config.read_consistency_ms))
            .execute()
            .await
            .map_err(SinkError::lance(format!("opening {}", config.dir)))?;
        let table = open_table(&db, &config.memory_table, memory_schema(), migrate).await?;
        let chunks = open_table(&db, &config.chunks_table, chunks_schema(), migrate).await?;
        let model = match &embedder {
            Some(embedder) => embedder.model_id().to_string(),
            None => EmbedConfig::default().model_id(),
        };
        Ok(LanceSink {
            db,
            table,
            chunks,
            embedder,
            view: crate::neo4j::DEFAULT_VIEW.to_string(),
            model,
            shared: Arc::new(Shared {
                write: tokio::sync::Mutex::new(()),
                cache: std::sync::Mutex::new(VectorCache::new(config.vector_cache_entries)),
                wake: Notify::new(),
                trained_on: [AtomicUsize::new(0), AtomicUsize::new(0)],
                other_models: std::sync::RwLock::new(Vec::new()),
                model_presence: std::sync::Mutex::new(HashMap::new()),
                config: config.clone(),
            }),
            observer: None,
        })
    }

    /// The same sink also searching the rows whose vectors `other` computed (rows carry their
    /// `vector_model`): a query is embedded by each model and matched against its rows only.
    pub fn also_embedded_by(self, other: Arc<Embedder>) -> Self {
        self.embed_queries_also_with(other);
        self
    }

    /// From now on, also embed queries with `other` wherever a table holds its vectors; every
    /// clone of this sink sees it (a running query service takes on the static table when a
    /// backfill starts). Returns false when `other` is this sink's own model or already known.
    pub fn embed_queries_also_with(&self, other: Arc<Embedder>) -> bool {
        if Some(other.model_id()) == self.embedder.as_ref().map(|e| e.model_id()) {
            return false;
        }
        let mut others = self
            .shared
            .other_models
            .write()
            .unwrap_or_else(|e| e.into_inner());
        if others.iter().any(|e| e.model_id() == other.model_id()) {
            return false;
        }
        info!(
            model = other.model_id(),
            "queries are also embedded by another model"
        );
        others.push(other);
        true
    }

    /// The ids of the other models queries are embedded by ([`LanceSink::also_embedded_by`]).
    pub fn other_query_models(&self) -> Vec<String> {
        self.shared
            .other_models
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|e| e.model_id().to_string())
            .collect()
    }

    /// The same sink reporting its vector backlog, embeddings and cache hits to `observer`.
    pub fn with_observer(mut self, observer: Arc<dyn VectorObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// The same sink writing (and reconciling) the given view, normally the topic prefix.
    pub fn with_view(mut self, view: impl Into<String>) -> Self {
        self.view = view.into();
        self
    }

    /// Upsert rows by id and delete rows by id. A row gets the vector of an existing row (or
    /// recent text) with the same text hash, else a null vector that the filler
    /// ([`LanceSink::spawn_vector_filler`]) fills later; the model never runs here, so an
    /// epoch is written at the speed of LanceDB, not of the embedder. Returns the rows written
    /// without a vector.
    pub async fn apply(
        &self,
        upserts: &[MemoryRow],
        deletes: &[String],
    ) -> Result<usize, SinkError> {
        let _write = self.shared.write.lock().await;
        // Looked up before the deletes: an edit that gives unchanged text a new row id
        // reuses the vector of the row it replaces.
        let texts: Vec<&str> = upserts.iter().map(|r| r.text.as_str()).collect();
        let vectors = self.known_vectors(Target::Memory, &texts).await?;
        delete_ids(&self.table, deletes, "rows").await?;
        if upserts.is_empty() {
            return Ok(0);
        }
        let stamp = Stamp {
            view: &self.view,
            model: &self.model,
            written_at: epigraph_schemas::now_millis(),
        };
        let batch = to_batch(upserts, &vectors, stamp)
            .map_err(|e| SinkError::Model(format!("building a batch: {e}")))?;
        upsert_by_id(&self.table, batch, memory_schema(), "rows").await?;
        let waiting = self.written(&vectors);
        debug!(
            upserts = upserts.len(),
            deletes = deletes.len(),
            waiting,
            "lancedb epoch written"
        );
        Ok(waiting)
    }

    /// Delete every row of this view (of one tenant): the view is rebuilt from the record
    /// afterwards.
    pub async fn clear(&self, tenant: Option<&str>) -> Result<(), SinkError> {
        let filter = match tenant {
            Some(tenant) => format!(
                "view = {} AND tenant = {}",
                quote(&self.view),
                quote(tenant)
            ),
            None => format!("view = {}", quote(&self.view)),
        };
        for table in [&self.table, &self.chunks] {
            table
                .delete(&filter)
                .await
                .map_err(SinkError::lance("clearing rows"))?;
        }
        Ok(())
    }

    /// Every memory row's content hash in this view, by id (for reconciliation).
    pub async fn state(&self) -> Result<HashMap<String, String>, SinkError> {
        self.table_state(Target::Memory).await
    }

    /// Every chunk's content hash in this view, by id (for reconciliation).
    pub async fn chunk_state(&self) -> Result<HashMap<String, String>, SinkError> {
        self.table_state(Target::Chunks).await
    }

    async fn table_state(&self, target: Target) -> Result<HashMap<String, String>, SinkError> {
        let batches: Vec<RecordBatch> = self
            .target(target)
            .query()
            .only_if(format!("view = {}", quote(&self.view)))
            .select(Select::columns(&["id", "content_hash"]))
            .execute()
            .await
            .map_err(SinkError::lance("reading row hashes"))?
            .try_collect()
            .await
            .map_err(SinkError::lance("reading row hashes"))?;
        let mut state = HashMap::new();
        for batch in &batches {
            let (Some(ids), Some(hashes)) = (
                string_column(batch, "id"),
                string_column(batch, "content_hash"),
            ) else {
                continue;
            };
            for i in 0..batch.num_rows() {
                state.insert(ids.value(i).to_string(), hashes.value(i).to_string());
            }
        }
        Ok(state)
    }

    /// Chunks in the `chunks` table, optionally filtered (`tenant = 'acme'`).
    pub async fn count_chunks(&self, filter: Option<String>) -> Result<usize, SinkError> {
        self.chunks
            .count_rows(filter)
            .await
            .map_err(SinkError::lance("counting chunks"))
    }

    /// Upsert chunks by id and delete chunks by id, like [`apply`](Self::apply): a chunk
    /// gets the vector of a chunk with the same text hash, else a null one the filler fills.
    /// Returns the chunks written without a vector.
    pub async fn apply_chunks(
        &self,
        upserts: &[ChunkRow],
        deletes: &[String],
    ) -> Result<usize, SinkError> {
        let _write = self.shared.write.lock().await;
        let texts: Vec<&str> = upserts.iter().map(|r| r.text.as_str()).collect();
        let vectors = self.known_vectors(Target::Chunks, &texts).await?;
        delete_ids(&self.chunks, deletes, "chunks").await?;
        if upserts.is_empty() {
            return Ok(0);
        }
        let stamp = Stamp {
            view: &self.view,
            model: &self.model,
            written_at: epigraph_schemas::now_millis(),
        };
        let batch = chunk_batch(upserts, &vectors, stamp)
            .map_err(|e| SinkError::Model(format!("building a batch: {e}")))?;
        upsert_by_id(&self.chunks, batch, chunks_schema(), "chunks").await?;
        let waiting = self.written(&vectors);
        Ok(waiting)
    }

    /// Rows in the table, optionally filtered (`tenant = 'acme'`).
    pub async fn count(&self, filter: Option<String>) -> Result<usize, SinkError> {
        self.table
            .count_rows(filter)
            .await
            .map_err(SinkError::lance("counting rows"))
    }

    /// Whether `table` holds rows with vectors of `model`. Read at most once per ten times
    /// `read_consistency_ms` (5 s by default) per table and model, so a query pays for a count
    /// only now and then, and a backfill written by another process is searched within that.
    pub(crate) async fn holds_vectors_of(
        &self,
        table: &Table,
        model: &str,
    ) -> Result<bool, SinkError> {
        let key = (table.name().to_string(), model.to_string());
        let ttl = Duration::from_millis(self.shared.config.read_consistency_ms.saturating_mul(10));
        let known = self
            .shared
            .model_presence
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .copied();
        if let Some((read, present)) = known
            && read.elapsed() < ttl
        {
            return Ok(present);
        }
        let present = table
            .count_rows(Some(format!("vector_model = {}", quote(model))))
            .await
            .map_err(SinkError::lance("counting rows of a model"))?
            > 0;
        self.shared
            .model_presence
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, (Instant::now(), present));
        Ok(present)
    }

    /// Create the missing indexes and fold new rows into them: the full-text index on `text`
    /// and a B-tree on `text_hash` (the vector cache's lookups) once the table has rows, the
    /// vector index once `vector_index_min_rows` rows have vectors (retrained when that number
    /// doubled since). Called by the pipeline when it is idle and after compactions.
    pub async fn optimize(&self) -> Result<(), SinkError> {
        let _write = self.shared.write.lock().await;
        for target in [Target::Memory, Target::Chunks] {
            let (table, name) = (self.target(target), target.name());
            if table
                .count_rows(None)
                .await
                .map_err(SinkError::lance("counting rows"))?
                == 0
            {
                continue;
            }
            let indices = table
                .list_indices()
                .await
                .map_err(SinkError::lance("listing indexes"))?;
            let indexed = |column: &str| {
                indices
                    .iter()
                    .any(|i| i.columns.iter().any(|c| c == column))
            };
            if !indexed("text") {
                table
                    .create_index(&["text"], Index::FTS(FtsIndexBuilder::default()))
                    .execute()
                    .await
                    .map_err(SinkError::lance("creating the full-text index"))?;
                info!(table = name, "created the full-text index on text");
            }
            if !indexed("text_hash") {
                table
                    .create_index(&["text_hash"], Index::BTree(BTreeIndexBuilder::default()))
                    .execute()
                    .await
                    .map_err(SinkError::lance("creating the text hash index"))?;
            }
            self.vector_index(target, indexed("vector")).await?;
            // Fold the rows written since into the existing indexes.
            table
                .optimize(OptimizeAction::Index(OptimizeOptions::default()))
                .await
                .map_err(SinkError::lance("optimizing indexes"))?;
        }
        Ok(())
    }

    /// Creates (or retrains) the vector index of `target` when its rows with vectors reached
    /// the threshold (or doubled since the last training). Chunks are
    /// Mind Graph's fallback and are searched by vector too, so they get the same index.
    async fn vector_index(&self, target: Target, exists: bool) -> Result<(), SinkError> {
        let table = self.target(target);
        let trained_on = &self.shared.trained_on[target as usize];
        if exists && trained_on.load(Ordering::Relaxed) == 0 {
            let stats = table
                .index_stats(VECTOR_INDEX)
                .await
                .map_err(SinkError::lance("reading the vector index's statistics"))?;
            let indexed = stats.map(|s| s.num_indexed_rows).unwrap_or(0);
            trained_on.store(indexed.max(1), Ordering::Relaxed);
        }
        let embedded = table
            .count_rows(Some("vector IS NOT NULL".into()))
            .await
            .map_err(SinkError::lance("counting rows"))?;
        let due = if exists {
            embedded >= trained_on.load(Ordering::Relaxed).saturating_mul(2)
        } else {
            embedded >= self.shared.config.vector_index_min_rows.max(1)
        };
        if !due {
            return Ok(());
        }
        let started = std::time::Instant::now();
        // About 8,192 vectors per IVF partition (each partition is one HNSW graph).
        let partitions = (embedded / 8_192).clamp(1, 1_024) as u32;
        table
            .create_index(
                &["vector"],
                Index::IvfHnswSq(
                    IvfHnswSqIndexBuilder::default()
                        .distance_type(DistanceType::Cosine)
                        .num_partitions(partitions),
                ),
            )
            .name(VECTOR_INDEX.to_string())
            .replace(true)
            .execute()
            .await
            .map_err(SinkError::lance("creating the vector index"))?;
        trained_on.store(embedded, Ordering::Relaxed);
        info!(
            table = target.name(),
            rows = embedded,
            partitions,
            seconds = started.elapsed().as_secs_f64(),
            retrained = exists,
            "trained the vector index (IVF_HNSW_SQ, cosine)"
        );
        Ok(())
    }

    /// The chunks' vector index rows (indexed, not yet indexed), when there is one.
    pub async fn chunk_vector_index_rows(&self) -> Result<Option<(usize, usize)>, SinkError> {
        let stats = self
            .chunks
            .index_stats(VECTOR_INDEX)
            .await
            .map_err(SinkError::lance("reading the vector index's statistics"))?;
        Ok(stats.map(|s| (s.num_indexed_rows, s.num_unindexed_rows)))
    }

    /// The vector index's rows (indexed, not yet indexed), when there is one.
    pub async fn vector_index_rows(&self) -> Result<Option<(usize, usize)>, SinkError> {
        let stats = self
            .table
            .index_stats(VECTOR_INDEX)
            .await
            .map_err(SinkError::lance("reading the vector index's statistics"))?;
        Ok(stats.map(|s| (s.num_indexed_rows, s.num_unindexed_rows)))
    }

    /// Rewrite small fragments into large ones (every epoch and every vector batch adds one)
    /// and remove versions older than an hour, then [`optimize`](Self::optimize) the indexes.
    pub async fn compact(&self) -> Result<Compaction, SinkError> {
        let mut report = Compaction::default();
        {
            let _write = self.shared.write.lock().await;
            self.chunks
                .optimize(OptimizeAction::Compact {
                    options: CompactionOptions::default(),
                    remap_options: None,
                })
                .await
                .map_err(SinkError::lance("compacting the chunks table"))?;
            self.chunks
                .optimize(OptimizeAction::Prune {
                    older_than: Some(lancedb::table::Duration::hours(1)),
                    delete_unverified: None,
                    error_if_tagged_old_versions: None,
                })
                .await
                .map_err(SinkError::lance("pruning old versions of the chunks"))?;
            let stats = self
                .table
                .optimize(OptimizeAction::Compact {
                    options: CompactionOptions::default(),
                    remap_options: None,
                })
                .await
                .map_err(SinkError::lance("compacting the memory table"))?;
            if let Some(c) = stats.compaction {
                report.fragments_removed = c.fragments_removed;
                report.fragments_added = c.fragments_added;
            }
            let stats = self
                .table
                .optimize(OptimizeAction::Prune {
                    older_than: Some(lancedb::table::Duration::hours(1)),
                    delete_unverified: None,
                    error_if_tagged_old_versions: None,
                })
                .await
                .map_err(SinkError::lance("pruning old versions"))?;
            if let Some(p) = stats.prune {
                report.versions_removed = p.old_versions;
            }
        }
        self.optimize().await?;
        info!(?report, "compacted the memory table");
        Ok(report)
    }

    /// Fragments of the table (a compaction lowers their number).
    pub async fn fragments(&self) -> Result<usize, SinkError> {
        let stats = self
            .table
            .stats()
            .await
            .map_err(SinkError::lance("reading table statistics"))?;
        Ok(stats.fragment_stats.num_fragments)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use lancedb::arrow::arrow_schema::{DataType, Field, Schema};

    use super::*;

    #[tokio::test]
    async fn a_reader_refuses_a_table_of_another_schema_and_a_writer_migrates_it() {
        let dir = tempfile::tempdir().unwrap();
        let config = LanceConfig {
            dir: dir.path().display().to_string(),
            embed: false,
            ..LanceConfig::default()
        };
        let db = connect(&config.dir).execute().await.unwrap();
        let old = Arc::new(Schema::new(vec![Field::new("id", DataType::Utf8, false)]));
        db.create_empty_table(&config.memory_table, old)
            .execute()
            .await
            .unwrap();
        let refused = LanceSink::open_reader(&config, None).await.unwrap_err();
        assert!(refused.to_string().contains("another schema"), "{refused}");
        // The old table is still there for the pipeline that wrote it.
        let kept = db.open_table(&config.memory_table).execute().await.unwrap();
        assert_eq!(kept.schema().await.unwrap().fields().len(), 1);
        // A writer (`epigraph run`) recreates it, after which a reader opens it.
        LanceSink::open(&config, None).await.unwrap();
        LanceSink::open_reader(&config, None).await.unwrap();
    }
}
