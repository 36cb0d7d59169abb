//! Pure differential-dataflow operators of epigraph. No I/O, no clocks, no randomness: time enters
//! as data, so every result is reproducible from the inputs.
//!
//! Map of the crate (each module uses only those listed before it; `graph` is the composition
//! root):
//! - [`model`]: the records that flow through the dataflow ([`SourceVersion`] in,
//!   [`GraphElement`]s out, with [`NodePriority`] and its fixed-point [`priority::Priority`])
//!   and their stable ids.
//! - [`ontology`]: the configured vocabulary: entity kinds, relations with signatures, the nine
//!   epistemic types with priors and cues, signed edge types, source authority, the
//!   `[epistemics]` settings, and the learned typer shipped with it ([`ontology::typer`]).
//! - [`extract`]: from a source version to typed memory objects, entity mentions, vocabulary
//!   relations and claims, with provenance ([`Extractor::extract`]), and the per-stage
//!   operators that aggregate entities and relations across sources.
//! - [`resolve`]: identity resolution as an overlay: `SAME_AS` edges from the components of
//!   same-as evidence (addresses, names, human verdicts), computed with `iterate`.
//! - [`epistemic`]: time, supersession, signed contradictions, answered questions and
//!   citations, judged per canonical subject and per named entity; superseded statements are
//!   demoted, never deleted.
//! - [`graph`]: the dataflow that composes the three ([`extract_graph`],
//!   [`extract_graph_with_verdicts`]): retracting a source version retracts exactly what it
//!   contributed.
//! - [`priority`]: node priorities K(v), OIDA's Eq. 1 at its fixed point (type prior, urgency,
//!   usage, evidence, signed influence, contradiction, decay), computed with `iterate` in
//!   fixed-point integers from a clock collection.
//! - [`changes`]: turning an epoch's consolidated updates into the upserts and deletes a sink
//!   applies.

pub mod changes;
pub mod epistemic;
pub mod extract;
pub mod graph;
pub mod model;
pub mod ontology;
pub mod priority;
pub mod resolve;

pub use changes::{SinkChanges, net_changes};
pub use extract::{Extraction, Extractor};
pub use graph::{
    extract_graph, extract_graph_governed, extract_graph_reviewed, extract_graph_with_verdicts,
};
pub use model::{
    Claim, EntityNode, EpistemicType, GraphElement, MemoryObject, NodePriority, Provenance,
    Relation, SourceNode, SourceVersion, Standing, StatementType, TemporalType, stable_id,
};
pub use ontology::{Ontology, OntologyError};
