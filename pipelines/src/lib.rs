//! The `epigraph` binary's library: configuration, CLI commands, the dataflow runtime and the
//! query service. Business logic lives in `epigraph-operators` (pure) and
//! `epigraph-sources` (files and Kafka) and `epigraph-sinks` (Neo4j, LanceDB, the embedder);
//! this crate wires them together.
//!
//! - [`config`]: `epigraph.toml` + `EPIGRAPH_*` variables.
//! - [`cli`]: the subcommands (`ingest`, `run`, `serve`, `schemas`, `eval`).
//! - [`eval`]: evaluation harnesses (extraction quality on labelled text).
//! - [`runtime`]: `epigraph run`.
//! - [`serve`]: `epigraph serve`.

pub mod cli;
pub mod config;
pub mod eval;
pub mod runtime;
pub mod serve;
