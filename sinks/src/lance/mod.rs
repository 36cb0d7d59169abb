//! The LanceDB sink and search: the `memory` table of memory objects, with a full-text (BM25)
//! index on `text` and all-MiniLM-L6-v2 embeddings in `vector`.
//!
//! Rows are upserted by `id` (`merge_insert`) and deleted by id. Rows whose `content_hash` did
//! not change are never rewritten. New rows are searchable at once by full text: LanceDB scans
//! unindexed rows next to the indexed ones, and [`LanceSink::optimize`] folds them into the
//! indexes when the pipeline is idle. Vectors follow behind ([`VectorFiller`], see
//! `vectors.rs`): a row is written with the vector of a row of the same `text_hash` (SHA-256 of
//! model id and text) when there is one, else null until the filler embeds it; vector search
//! only sees rows that have one, BM25 sees all. The `chunks` table holds each live source
//! version's text in overlapping chunks (`chunks.rs`), written and deleted with the version,
//! with its own full-text index and vectors filled the same way (after the memory rows).

mod chunks;
mod config;
mod rows;
mod search;
mod sink;
mod vector_cache;
mod vectors;

pub use chunks::{ChunkRow, Chunking, chunks_schema};
pub use config::LanceConfig;
pub use rows::{MemoryRow, text_hash};
pub use search::{ChunkHit, SearchHit, SearchMode, SearchRequest};
pub use sink::{Compaction, LanceSink};
pub use vectors::{FillPass, FillerStatus, VectorFiller, VectorObserver};
