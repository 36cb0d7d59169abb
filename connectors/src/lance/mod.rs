//! The LanceDB sink and search: the `memory` table of memory objects, with a full-text (BM25)
//! index on `text` and all-MiniLM-L6-v2 embeddings in `vector`.
//!
//! Rows are upserted by `id` (`merge_insert`) and deleted by id. Rows whose `content_hash` did
//! not change are never rewritten (and so never re-embedded). New rows are searchable at once:
//! LanceDB scans unindexed rows next to the indexed ones, and [`LanceSink::optimize`] folds them
//! into the indexes when the pipeline is idle.

mod config;
mod rows;
mod search;
mod sink;

pub use config::LanceConfig;
pub use rows::MemoryRow;
pub use search::{SearchHit, SearchMode, SearchRequest};
pub use sink::LanceSink;
