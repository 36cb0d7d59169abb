//! Pure differential-dataflow operators of epigraph. No I/O, no clocks, no randomness: time enters
//! as data, so every result is reproducible from the inputs.
//!
//! Map of the crate:
//! - [`model`]: the records that flow through the dataflow ([`SourceVersion`] in,
//!   [`GraphElement`]s out) and their stable ids.
//! - [`extract`]: from a source version to the graph elements it yields (the source node, its
//!   memory objects and their `DERIVED_FROM` edges). Retracting a source version retracts exactly
//!   what it yielded.
//! - [`changes`]: turning an epoch's consolidated updates into the upserts and deletes a sink
//!   applies.

pub mod changes;
pub mod extract;
pub mod model;

pub use changes::{SinkChanges, net_changes};
pub use extract::{document_memory, elements_of};
pub use model::{
    EpistemicType, GraphElement, MemoryObject, Relation, SourceNode, SourceVersion, stable_id,
};
