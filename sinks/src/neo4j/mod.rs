//! The Neo4j sink: the graph view of the dataflow's output.
//!
//! Every node carries the base label `Node` (unique `id`, backed by a constraint) plus its kind
//! labels (`Source:Document`, `Memory:Decision`, …); every relationship carries an `id`. Each
//! epoch's net changes are written in one transaction with batched `UNWIND` queries, values
//! always passed as parameters. Labels and relationship types cannot be parameters in Cypher, so
//! they are checked against `[A-Z][A-Za-z0-9_]*` before they reach a query.

mod config;
mod sink;
mod write;

pub use config::Neo4jConfig;
pub use sink::{
    COMMIT, DEFAULT_VIEW, GraphState, Neo4jSink, PROPERTIES_HASH, WriteTally, connect_graph,
    write_kind,
};
pub use write::{
    GraphBatch, NodeWrite, PropValue, PropertyWrite, RelationKey, RelationWrite, safe_identifier,
};
