//! The stores of epigraph: where the dataflow's results are written, and the model that embeds
//! them. Nothing here reads a source or serves a request.
//!
//! Map of the crate (one folder per component; each has a `config.rs` whose struct is the
//! user documentation of that component):
//! - [`neo4j`]: the graph sink (batched `UNWIND … MERGE`/`DELETE`, one transaction per batch) and
//!   the reads used to reconcile it.
//! - [`lance`]: the LanceDB sink (`memory` table with full-text index and embeddings, `chunks`
//!   table) and its search.
//! - [`embed`]: all-MiniLM-L6-v2 in candle, the local sentence embedder, and the static table.
//! - [`error`]: the typed error shared by all of them, which says whose fault a failure is.

pub mod embed;
pub mod error;
pub mod lance;
pub mod neo4j;

pub use epigraph_schemas::now_millis;
pub use error::{Fault, SinkError};
