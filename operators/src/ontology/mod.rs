//! The ontology as configuration: entity kinds, the closed relation vocabulary with signatures,
//! the nine epistemic types with their priors and cues, the signed edge types, source authority
//! and claim attributes.
//!
//! The project ships its ontology in `ontology/*.toml` (compiled in, see [`Ontology::bundled`]);
//! a deployment can replace it with its own folder or add files on top
//! (`epigraph::config::OntologyConfig::load` reads the files; [`Ontology::from_sources`] builds
//! from their text: this crate reads no file). An added kind or relation with a new name extends the vocabulary; one
//! with an existing name replaces it. Nothing outside the loaded vocabulary is ever emitted.

//!
//! The parts: `vocabulary` (entity kinds, relations, epistemic types, scoring, claim
//! attributes, aliases), `signed_edges` (edge types between memory objects), `authority`
//! (source authority), `epistemics` (how statements relate over time), `load` (files, merging
//! and validation) and [`typer`] (the learned second opinion on unit types shipped as
//! `typer.toml`, also reachable as `extract::typer`).

mod authority;
mod epistemics;
mod load;
mod signed_edges;
pub mod typer;
mod vocabulary;

use std::path::PathBuf;

use epigraph_schemas::SourceKind;

use crate::model::EpistemicType;
pub use crate::model::parse_type;
pub use authority::Authority;
pub use epistemics::{
    AnswerKind, AnswersSpec, BlocksSpec, BoilerplateSpec, CitationEdgeSpec, CitationsSpec,
    EpistemicsSpec, ExtensionsSpec, LifecycleSpec, MatterSpec, MattersSpec, NeedSpec, ReplacedSpec,
    RestatedSpec, RevisionsSpec, SectionStances, UncuedSpec,
};
pub use signed_edges::EdgeSpec;
pub use vocabulary::{
    AliasSpec, AttributeSpec, EntityKind, Exclusive, Recurring, RelationSpec, Scoring,
    StatementCues, TypeSpec, ValueKind,
};

/// Why an ontology could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum OntologyError {
    /// A file could not be read.
    #[error("reading ontology file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file is not valid TOML for the ontology.
    #[error("parsing ontology file {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, with line and column.
        message: String,
    },
    /// The files parse but do not form a valid ontology.
    #[error("invalid ontology: {0}")]
    Invalid(String),
}
/// The whole ontology.
#[derive(Clone, Debug, PartialEq)]
pub struct Ontology {
    /// Entity kinds.
    pub kinds: Vec<EntityKind>,
    /// Recurring untyped phrases, if they become entities.
    pub recurring: Option<Recurring>,
    /// The closed relation vocabulary.
    pub relations: Vec<RelationSpec>,
    /// Maximum characters between a mention and a relation cue.
    pub max_gap: usize,
    /// The nine epistemic types, in tie-breaking order.
    pub types: Vec<TypeSpec>,
    /// Unit scoring.
    pub scoring: Scoring,
    /// Signed edge types between memory objects.
    pub edges: Vec<EdgeSpec>,
    /// Source authority.
    pub authority: Authority,
    /// Statement-type cues.
    pub statement: StatementCues,
    /// Claim attributes.
    pub attributes: Vec<AttributeSpec>,
    /// Status words.
    pub statuses: Vec<String>,
    /// Supersession, contradiction and answered questions.
    pub epistemics: EpistemicsSpec,
    /// Configured aliases.
    pub aliases: Vec<AliasSpec>,
    /// The learned second opinion on unit types (`typer.toml`), if shipped and enabled.
    pub typer: Option<typer::Typer>,
}

impl Ontology {
    /// A kind by name.
    pub fn kind(&self, name: &str) -> Option<&EntityKind> {
        self.kinds.iter().find(|k| k.name == name)
    }

    /// A relation by name.
    pub fn relation(&self, name: &str) -> Option<&RelationSpec> {
        self.relations.iter().find(|r| r.name == name)
    }

    /// An epistemic type's spec.
    pub fn type_spec(&self, memory_type: EpistemicType) -> &TypeSpec {
        self.types
            .iter()
            .find(|t| t.memory_type == memory_type)
            .expect("all nine types are present (validated)")
    }

    /// A signed edge type by name.
    pub fn edge(&self, name: &str) -> Option<&EdgeSpec> {
        self.edges.iter().find(|e| e.name == name)
    }

    /// The default type of a unit without cues in a source of this kind.
    pub fn default_type(&self, kind: SourceKind) -> EpistemicType {
        self.scoring
            .default_type
            .get(kind.as_str())
            .and_then(|name| parse_type(name))
            .unwrap_or(EpistemicType::Narrative)
    }
}

#[cfg(test)]
mod tests;
