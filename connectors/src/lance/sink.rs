use std::collections::HashMap;
use std::sync::Arc;

use futures::TryStreamExt;
use lancedb::arrow::arrow_array::{RecordBatch, RecordBatchIterator};
use lancedb::database::CreateTableMode;
use lancedb::index::Index;
use lancedb::index::scalar::FtsIndexBuilder;
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use lancedb::table::{OptimizeAction, OptimizeOptions};
use lancedb::{Connection, Table, connect};
use tracing::{debug, info};

use super::LanceConfig;
use super::rows::{MemoryRow, memory_schema, quote, rows_of, string_column, to_batch};
use crate::ConnectorError;
use crate::embed::Embedder;

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
    pub(crate) embedder: Option<Arc<Embedder>>,
    view: String,
}

impl std::fmt::Debug for LanceSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LanceSink")
            .field("embeds", &self.embedder.is_some())
            .finish()
    }
}

impl LanceSink {
    /// Open (or create) the `memory` table. Without an embedder rows are stored with null
    /// vectors and only full-text search finds them.
    pub async fn open(
        config: &LanceConfig,
        embedder: Option<Arc<Embedder>>,
    ) -> Result<Self, ConnectorError> {
        let db = connect(&config.dir)
            .read_consistency_interval(std::time::Duration::from_millis(config.read_consistency_ms))
            .execute()
            .await
            .map_err(ConnectorError::lance(format!("opening {}", config.dir)))?;
        let create = || async {
            db.create_empty_table(&config.memory_table, memory_schema())
                .mode(CreateTableMode::exist_ok(|req| req))
                .execute()
                .await
                .map_err(ConnectorError::lance("opening the memory table"))
        };
        let table = match db.open_table(&config.memory_table).execute().await {
            Ok(table) => {
                let schema = table
                    .schema()
                    .await
                    .map_err(ConnectorError::lance("reading the memory table's schema"))?;
                let names = |s: &lancedb::arrow::arrow_schema::Schema| -> Vec<String> {
                    s.fields().iter().map(|f| f.name().clone()).collect()
                };
                if names(&schema) == names(&memory_schema()) {
                    table
                } else {
                    // A view is rebuildable: the next run's reconciliation refills it.
                    tracing::warn!(
                        table = %config.memory_table,
                        "the memory table has an older schema: it is recreated, and `epigraph run` refills it"
                    );
                    db.drop_table(&config.memory_table, &[])
                        .await
                        .map_err(ConnectorError::lance("dropping an outdated memory table"))?;
                    create().await?
                }
            }
            Err(_) => create().await?,
        };
        Ok(LanceSink {
            db,
            table,
            embedder,
            view: crate::neo4j::DEFAULT_VIEW.to_string(),
        })
    }

    /// The same sink writing (and reconciling) the given view, normally the topic prefix.
    pub fn with_view(mut self, view: impl Into<String>) -> Self {
        self.view = view.into();
        self
    }

    /// Upsert rows by id (embedding their text first) and delete rows by id.
    pub async fn apply(
        &self,
        upserts: &[MemoryRow],
        deletes: &[String],
    ) -> Result<(), ConnectorError> {
        if !deletes.is_empty() {
            for chunk in deletes.chunks(500) {
                let list = chunk
                    .iter()
                    .map(|id| quote(id))
                    .collect::<Vec<_>>()
                    .join(", ");
                self.table
                    .delete(format!("id IN ({list})").as_str())
                    .await
                    .map_err(ConnectorError::lance("deleting rows"))?;
            }
        }
        if upserts.is_empty() {
            return Ok(());
        }
        let vectors = self.embed(upserts).await?;
        let batch = to_batch(upserts, &vectors, &self.view)
            .map_err(|e| ConnectorError::Model(format!("building a batch: {e}")))?;
        let mut merge = self.table.merge_insert(&["id"]);
        merge
            .when_matched_update_all(None)
            .when_not_matched_insert_all();
        let reader = Box::new(RecordBatchIterator::new(vec![Ok(batch)], memory_schema()));
        merge
            .execute(reader)
            .await
            .map_err(ConnectorError::lance("upserting rows"))?;
        debug!(
            upserts = upserts.len(),
            deletes = deletes.len(),
            "lancedb epoch written"
        );
        Ok(())
    }

    async fn embed(&self, rows: &[MemoryRow]) -> Result<Vec<Option<Vec<f32>>>, ConnectorError> {
        let Some(embedder) = self.embedder.clone() else {
            return Ok(vec![None; rows.len()]);
        };
        let texts: Vec<String> = rows.iter().map(|r| r.text.clone()).collect();
        let vectors = tokio::task::spawn_blocking(move || {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            embedder.embed(&refs)
        })
        .await
        .map_err(|e| ConnectorError::Model(format!("embedding task: {e}")))??;
        Ok(vectors.into_iter().map(Some).collect())
    }

    /// Rows whose vector is still missing (written without an embedder, or before the vectors
    /// caught up) get one: up to `batch` rows at a time are read, `vectorise` computes their
    /// vectors from their texts, and the rows are written back by id; until none is left.
    /// Returns how many rows were filled. Meant for when the pipeline is not rewriting the same
    /// rows (a backfill, a benchmark): a row changed in between would get its old text back.
    pub async fn backfill_vectors<F>(
        &self,
        filter: Option<&str>,
        batch: usize,
        mut vectorise: F,
    ) -> Result<usize, ConnectorError>
    where
        F: FnMut(&[&str]) -> Result<Vec<Vec<f32>>, ConnectorError>,
    {
        let condition = match filter {
            Some(filter) => format!("vector IS NULL AND ({filter})"),
            None => "vector IS NULL".to_string(),
        };
        let columns: Vec<String> = memory_schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .filter(|name| name != "vector" && name != "view")
            .collect();
        let mut filled = 0;
        loop {
            let batches: Vec<RecordBatch> = self
                .table
                .query()
                .only_if(condition.as_str())
                .select(Select::columns(&columns))
                .limit(batch.max(1))
                .execute()
                .await
                .map_err(ConnectorError::lance("reading rows without vectors"))?
                .try_collect()
                .await
                .map_err(ConnectorError::lance("reading rows without vectors"))?;
            let rows: Vec<MemoryRow> = batches.iter().flat_map(rows_of).collect();
            if rows.is_empty() {
                return Ok(filled);
            }
            let texts: Vec<&str> = rows.iter().map(|r| r.text.as_str()).collect();
            let vectors: Vec<Option<Vec<f32>>> = vectorise(&texts)?.into_iter().map(Some).collect();
            let written = to_batch(&rows, &vectors, &self.view)
                .map_err(|e| ConnectorError::Model(format!("building a batch: {e}")))?;
            let mut merge = self.table.merge_insert(&["id"]);
            merge.when_matched_update_all(None);
            merge
                .execute(Box::new(RecordBatchIterator::new(
                    vec![Ok(written)],
                    memory_schema(),
                )))
                .await
                .map_err(ConnectorError::lance("writing vectors"))?;
            filled += rows.len();
        }
    }

    /// Delete every row of this view (of one tenant): the view is rebuilt from the record
    /// afterwards.
    pub async fn clear(&self, tenant: Option<&str>) -> Result<(), ConnectorError> {
        let filter = match tenant {
            Some(tenant) => format!(
                "view = {} AND tenant = {}",
                quote(&self.view),
                quote(tenant)
            ),
            None => format!("view = {}", quote(&self.view)),
        };
        self.table
            .delete(&filter)
            .await
            .map_err(ConnectorError::lance("clearing rows"))?;
        Ok(())
    }

    /// Every row's content hash in this view, by id (for reconciliation).
    pub async fn state(&self) -> Result<HashMap<String, String>, ConnectorError> {
        let batches: Vec<RecordBatch> = self
            .table
            .query()
            .only_if(format!("view = {}", quote(&self.view)))
            .select(Select::columns(&["id", "content_hash"]))
            .execute()
            .await
            .map_err(ConnectorError::lance("reading row hashes"))?
            .try_collect()
            .await
            .map_err(ConnectorError::lance("reading row hashes"))?;
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

    /// Rows in the table, optionally filtered (`tenant = 'acme'`).
    pub async fn count(&self, filter: Option<String>) -> Result<usize, ConnectorError> {
        self.table
            .count_rows(filter)
            .await
            .map_err(ConnectorError::lance("counting rows"))
    }

    /// Create the full-text index once the table has rows, fold new rows into the indexes and
    /// compact small fragments. Called by the pipeline when it is idle.
    pub async fn optimize(&self) -> Result<(), ConnectorError> {
        if self.count(None).await? == 0 {
            return Ok(());
        }
        let indices = self
            .table
            .list_indices()
            .await
            .map_err(ConnectorError::lance("listing indexes"))?;
        if !indices
            .iter()
            .any(|i| i.columns.iter().any(|c| c == "text"))
        {
            self.table
                .create_index(&["text"], Index::FTS(FtsIndexBuilder::default()))
                .execute()
                .await
                .map_err(ConnectorError::lance("creating the full-text index"))?;
            info!("created the full-text index on memory.text");
        }
        self.table
            .optimize(OptimizeAction::Index(OptimizeOptions::default()))
            .await
            .map_err(ConnectorError::lance("optimizing indexes"))?;
        Ok(())
    }
}
