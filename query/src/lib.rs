//! The query core of epigraph: what an agent or an analyst can ask of the memory, answered
//! from Neo4j (graph state) and LanceDB (full text, vectors, chunks). It knows nothing of HTTP
//! or MCP: `epigraph::serve` adapts it to both.
//!
//! Map of the crate:
//! - [`service`]: [`QueryService`], the stores and limits every answer is read from, and the
//!   [`UsageSink`] that retrievals are reported to.
//! - [`search`]: `search` at the memory, document or chunk level, its parameters and results.
//! - [`retrieve`]: the ranking core: candidates, their graph state, relevance · φ, and the cap
//!   that keeps what was replaced below what replaced it.
//! - [`fuse`]: document ranking for `level=source` (memory objects, chunks and document BM25
//!   fused).
//! - [`expand`]: graph-aware expansion, a personalised PageRank from the best memory objects
//!   over typed edges, entities and document links (the fourth document signal).
//! - [`rank`]: φ of OIDA's Eq. 2 and the as-of view of a memory object ([`rank::AsOf`]).
//! - [`briefing`], [`context`]: token-budgeted context blocks for agents.
//! - [`reads`]: nodes, neighbourhoods, entities, contradictions, open questions, priorities,
//!   timelines and traversals.
//! - [`plans`]: plans past their date (`GET /v1/plans/overdue`).
//! - [`subjects`]: the code identifiers a query names, which document ranking reads
//!   statements on.
//! - [`graph`]: the Cypher reads behind all of them ([`graph::GraphReader`]) and their cards.
//! - [`error`]: [`QueryError`], which says whose fault a failure is.

pub mod briefing;
pub mod context;
pub mod error;
pub mod expand;
pub mod fuse;
pub mod graph;
pub mod plans;
pub mod rank;
pub mod reads;
pub mod retrieve;
pub mod search;
pub mod service;
pub mod subjects;

pub use error::{InstantError, QueryError};
pub use service::{KThen, PriorityHistoryRead, QueryConfig, QueryService, UsageSink, snippet};
