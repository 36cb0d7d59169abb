//! `epigraph run`: Kafka → timely/differential dataflow → Neo4j + LanceDB.
//!
//! - [`dataflow`]: the timely workers and the channel protocol with the async side.
//! - [`upsert`]: the per-key state that turns a stream of versions and tombstones into
//!   differential updates (a new version retracts the previous one).
//! - [`usage`]: the retrievals in force for the priorities' usage term, retracted once old.
//! - [`views`]: graph elements as Neo4j writes and LanceDB rows; reconciliation.
//! - [`metrics`]: Prometheus counters and histograms on `GET /metrics`, and `GET /readyz`.
//! - [`outage`]: retrying what an unreachable Kafka, Neo4j or LanceDB failed, with backoff,
//!   and reporting the outage.
//! - [`pipeline`]: the loop that restores state from the compacted topics, reconciles the sinks,
//!   then seals epochs, applies their net changes and commits offsets after both sinks acked.

pub mod dataflow;
pub mod metrics;
pub mod outage;
pub mod pipeline;
pub mod upsert;
pub mod usage;
pub mod views;

pub use pipeline::{RunOptions, RunReport, clear_views, run, run_peer};
