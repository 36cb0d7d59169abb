//! From source versions to graph elements: typed memory objects, entity mentions, relations of
//! the closed vocabulary and claims, each with its provenance.
//!
//! [`Extractor::extract`] is pure and deterministic: one source version in, its
//! [`Extraction`] out. The dataflow stage (`extract_graph`, in the crate's `graph` module)
//! runs it inside differential dataflow and aggregates what spans sources (entity nodes,
//! entity relations, mentions of entities known elsewhere in the tenant), so retracting a
//! source version retracts exactly its contributions; the operators it uses for that live
//! here: [`Sighting`]s and their aggregation, [`OpenUnit`]s (relations that wait for names
//! known elsewhere) and [`doclinks`] (document headers into `SUPERSEDES` edges).
//!
//! The parts, each usable alone: [`segment`] (sentences and list items with sections),
//! [`mentions`] (entity recognition), [`classify`] (epistemic typing), [`typer`] (the learned
//! second opinion on typing, shipped with the ontology), [`claims`] (amounts, dates, counts,
//! percentages, statuses, assignments), [`choice`] (choices on a matter), [`relations`]
//! (vocabulary relations), [`aliases`] (stated aliases), [`header_parties`] (people of a
//! header block), [`dates`] (dates and periods), [`cues`] (compiled cue phrases) and [`edge`] (the
//! structural relationship types).

pub mod aliases;
pub mod choice;
pub mod claims;
pub mod classify;
pub mod cues;
pub mod dates;
pub mod doclinks;
pub mod edge;
mod extractor;
mod headers;
pub mod mentions;
pub(crate) mod open_units;
pub mod relations;
pub mod segment;
pub(crate) mod sighting;

pub use crate::ontology::typer;
pub use dates::{civil_date, year_of};
pub use extractor::{Extraction, Extractor};
pub use headers::header_parties;
pub use open_units::OpenUnit;
pub use sighting::{CandidateMention, Sighting, entity_id};

/// Name and version written into every element's provenance.
pub const EXTRACTOR: &str = "epigraph.rules/0.5";
