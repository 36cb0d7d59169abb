use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Where the LanceDB tables live, and how their vectors and indexes are maintained.
///
/// Rows are written without vectors when their epoch is applied (full-text searchable at
/// once); a background task of `epigraph run` fills the vectors behind them, oldest row first,
/// `embed_batch_rows` at a time, reusing the vector of any row or recent text with the same
/// `text_hash` instead of running the model again.
///
/// ```toml
/// [lancedb]
/// dir = "/root/.cache/epigraph/lancedb"
/// chunk_tokens = 200
/// chunk_overlap_tokens = 30
/// embed_batch_rows = 256
/// vector_cache_entries = 20000
/// vector_index_min_rows = 100000
/// compact_every_epochs = 100
/// compact_every_secs = 600
/// index_every_secs = 60
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LanceConfig {
    /// Database directory or URI (`s3://…` for object storage). Default
    /// `$EPIGRAPH_HOME/lancedb` (`~/.cache/epigraph/lancedb`).
    pub dir: String,
    /// Name of the memory-object table. Default `memory`.
    pub memory_table: String,
    /// Name of the table of source text in chunks. Default `chunks`.
    pub chunks_table: String,
    /// Estimated tokens (characters / 4) per chunk of source text. Default 200 (≈ 120 words,
    /// within the 256 word pieces MiniLM reads): on the KEP and PEP retrieval sets `level=source`
    /// ranks better with 200 than with 1,200 (nDCG@10 0.928 against 0.911 and 0.882 against
    /// 0.842, docs/query.md "Chunk size"); a longer chunk is also cut by the embedder.
    pub chunk_tokens: usize,
    /// Estimated tokens shared by consecutive chunks. Default 30.
    pub chunk_overlap_tokens: usize,
    /// Whether rows get embeddings (needs the model). Default true; false keeps full-text only.
    pub embed: bool,
    /// How stale a reader may be, in milliseconds: after this long a read checks for versions
    /// written by another process (`epigraph serve` reading what `epigraph run` writes).
    /// 0 checks on every read. Default 500. Whether a table holds vectors of another model
    /// (a static backfill's) is re-read after ten times this.
    pub read_consistency_ms: u64,
    /// Rows the background embedder takes per batch (oldest written first). A batch is one
    /// read, one pass of the model over its distinct new texts (in forward passes of
    /// `model.batch_size`) and one write. Default 256.
    pub embed_batch_rows: usize,
    /// Vectors kept in memory by text hash (least recently used evicted; 384 floats each,
    /// ~1.5 KiB): a text deleted and written again, or repeated across rows, is not embedded
    /// twice. 0 keeps none (the table is still consulted). Default 20,000 (~30 MiB).
    pub vector_cache_entries: usize,
    /// A vector index (IVF_HNSW_SQ, cosine) is created once the memory table holds at least
    /// this many rows with vectors, and retrained when that number has doubled since; below
    /// it, vector search scans the rows (exact and fast enough). New rows are folded into
    /// the index by every optimisation. Default 100,000.
    pub vector_index_min_rows: usize,
    /// Compact the table's small fragments (and remove versions older than an hour) after
    /// this many epochs that wrote rows … Default 100; 0 never by count.
    pub compact_every_epochs: u64,
    /// … or when this many seconds passed since the last compaction and something was
    /// written. Default 600; 0 never by time.
    pub compact_every_secs: u64,
    /// While epochs keep coming (a pipeline that is never idle), fold the rows written since
    /// into the full-text and vector indexes at least this often, in seconds; rows past the
    /// indexes are searched exhaustively, so readers slow down as they pile up. An idle
    /// pipeline and every compaction do it anyway. Default 60; 0 only when idle or compacting.
    pub index_every_secs: u64,
}

impl LanceConfig {
    /// How sources are cut into chunks.
    pub fn chunking(&self) -> super::Chunking {
        super::Chunking {
            tokens: self.chunk_tokens.max(1),
            overlap_tokens: self.chunk_overlap_tokens,
        }
    }
}

impl Default for LanceConfig {
    fn default() -> Self {
        let dir: PathBuf = crate::embed::EmbedConfig::default()
            .dir
            .parent()
            .and_then(|models| models.parent())
            .map(|home| home.join("lancedb"))
            .unwrap_or_else(|| PathBuf::from("lancedb"));
        LanceConfig {
            dir: dir.display().to_string(),
            memory_table: "memory".into(),
            chunks_table: "chunks".into(),
            chunk_tokens: 200,
            chunk_overlap_tokens: 30,
            embed: true,
            read_consistency_ms: 500,
            embed_batch_rows: 256,
            vector_cache_entries: 20_000,
            vector_index_min_rows: 100_000,
            compact_every_epochs: 100,
            compact_every_secs: 600,
            index_every_secs: 60,
        }
    }
}
