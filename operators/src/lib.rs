//! Pure differential-dataflow operators of epigraph. No I/O, no clocks, no randomness: time enters
//! as data, so every result is reproducible from the inputs.
//!
//! Map of the crate:
//! - [`model`]: the records that flow through the dataflow ([`SourceVersion`] in,
//!   [`GraphElement`]s out) and their stable ids.
//! - [`ontology`]: the configured vocabulary: entity kinds, relations with signatures, the nine
//!   epistemic types with priors and cues, signed edge types, source authority.
//! - [`extract`]: from a source version to typed memory objects, entity mentions, vocabulary
//!   relations and claims, with provenance; entities and relations aggregated across sources.
//!   Retracting a source version retracts exactly what it contributed.
//! - [`resolve`]: identity resolution as an overlay: `SAME_AS` edges from the components of
//!   same-as evidence (addresses, names, human verdicts), computed with `iterate`.
//! - [`epistemic`]: time, supersession, signed contradictions and answered questions, judged
//!   per canonical subject and per named entity; superseded statements are demoted, never
//!   deleted.
//! - [`priority`]: node priorities K(v), OIDA's Eq. 1 at its fixed point (type prior, urgency,
//!   usage, evidence, signed influence, contradiction, decay), computed with `iterate` in
//!   fixed-point integers from a clock collection.
//! - [`changes`]: turning an epoch's consolidated updates into the upserts and deletes a sink
//!   applies.

pub mod changes;
pub mod epistemic;
pub mod extract;
pub mod model;
pub mod ontology;
pub mod priority;
pub mod resolve;

pub use changes::{SinkChanges, net_changes};
pub use extract::{Extraction, Extractor, extract_graph, extract_graph_with_verdicts};
pub use model::{
    Claim, EntityNode, EpistemicType, GraphElement, MemoryObject, NodePriority, Provenance,
    Relation, SourceNode, SourceVersion, Standing, StatementType, TemporalType, stable_id,
};
pub use ontology::{Ontology, OntologyError};
