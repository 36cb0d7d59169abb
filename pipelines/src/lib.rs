//! The `epigraph` binary's library: configuration, CLI commands, the dataflow runtime and the
//! HTTP/MCP transport of the query service. The domain lives elsewhere: `epigraph-operators`
//! (pure dataflow operators), `epigraph-sources` (files and Kafka), `epigraph-sinks` (Neo4j,
//! LanceDB, the embedder) and `epigraph-query` (search, ranking, context, graph reads); this
//! crate wires them together (see `docs/architecture.md`).
//!
//! - [`config`]: `epigraph.toml` + `EPIGRAPH_*` variables.
//! - [`cli`]: the subcommands (`ingest`, `run`, `serve`, `schemas`, `eval`).
//! - [`publish`]: a source's scan onto Kafka, with a progress bar.
//! - [`eval`]: evaluation harnesses (extraction, epistemics, identity, retrieval).
//! - [`runtime`]: `epigraph run`.
//! - [`serve`]: `epigraph serve`: routes, authentication, MCP, live feeds, OpenAPI, proposals.
//! - [`governance`]: the review windows of proposals (`[governance]`).
//! - [`llm`]: the optional model extractor, whose answers become proposals (`[llm]`).

pub mod cli;
pub mod config;
pub mod eval;
pub mod governance;
pub mod llm;
pub mod publish;
pub mod runtime;
pub mod serve;
