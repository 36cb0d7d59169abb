//! The ontology as configuration: entity kinds, the closed relation vocabulary with signatures,
//! the nine epistemic types with their priors and cues, the signed edge types, source authority
//! and claim attributes.
//!
//! The project ships its ontology in `ontology/*.toml` (compiled in, see [`Ontology::bundled`]);
//! a deployment can replace it with its own folder or add files on top
//! ([`Ontology::load`]). An added kind or relation with a new name extends the vocabulary; one
//! with an existing name replaces it. Nothing outside the loaded vocabulary is ever emitted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use epigraph_schemas::SourceKind;
use serde::{Deserialize, Serialize};

use crate::model::{EpistemicType, TemporalType};

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

/// An entity kind and how it is recognised in text (see `ontology/kinds.toml`).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EntityKind {
    /// Name and Neo4j label, e.g. `Person`.
    pub name: String,
    /// What the kind means.
    #[serde(default)]
    pub description: String,
    /// Exact names that are always this kind.
    #[serde(default)]
    pub gazetteer: Vec<String>,
    /// Words ending a capitalised phrase that make it this kind (kept in the name).
    #[serde(default)]
    pub name_suffixes: Vec<String>,
    /// Words right after a capitalised phrase that make it this kind (not in the name).
    #[serde(default)]
    pub after: Vec<String>,
    /// Words right before a capitalised phrase (or a number) that make it this kind.
    #[serde(default)]
    pub before: Vec<String>,
    /// Given names: a two- or three-word capitalised phrase starting with one is this kind.
    #[serde(default)]
    pub given_names: Vec<String>,
}

/// Recurring untyped phrases become entities of a fallback kind.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Recurring {
    /// The kind they get.
    pub kind: String,
    /// In how many distinct sources of a tenant a phrase must occur.
    pub min_sources: u32,
}

/// One relation of the closed vocabulary (see `ontology/relations.toml`).
#[derive(Clone, Debug, PartialEq)]
pub struct RelationSpec {
    /// Name, e.g. `works_on`; the Neo4j type is its upper case (`WORKS_ON`).
    pub name: String,
    /// Predicate group, e.g. `people`.
    pub group: String,
    /// Kinds allowed at the start.
    pub from: Vec<String>,
    /// Kinds allowed at the end.
    pub to: Vec<String>,
    /// Phrases between a `from` and a `to` mention that state it.
    pub cues: Vec<String>,
    /// Phrases between a `to` and a `from` mention that state it ("managed by").
    pub passive_cues: Vec<String>,
    /// Temporal type of the facts it states.
    pub temporal: TemporalType,
}

impl RelationSpec {
    /// The Neo4j relationship type.
    ///
    /// ```
    /// let ontology = epigraph_operators::Ontology::bundled();
    /// assert_eq!(ontology.relation("works_on").unwrap().rel_type(), "WORKS_ON");
    /// ```
    pub fn rel_type(&self) -> String {
        self.name.to_ascii_uppercase()
    }

    /// Whether a `from` → `to` edge between these kinds fits the signature.
    pub fn fits(&self, from: &str, to: &str) -> bool {
        self.from.iter().any(|k| k == from) && self.to.iter().any(|k| k == to)
    }
}

/// An epistemic type's priors and cues (see `ontology/types.toml`).
#[derive(Clone, Debug, PartialEq)]
pub struct TypeSpec {
    /// Which type.
    pub memory_type: EpistemicType,
    /// Initial priority s(v) (OIDA Table 1).
    pub priority: f64,
    /// Temporal coefficient λ of Eq. 1 (negative: urgency grows).
    pub lambda: f64,
    /// Temporal behaviour, as documentation.
    pub behaviour: String,
    /// Role, as documentation.
    pub role: String,
    /// Default temporal type of its statements.
    pub temporal_type: TemporalType,
    /// Strong cues.
    pub strong: Vec<String>,
    /// Weak cues.
    pub weak: Vec<String>,
    /// Section headings (lower case) whose units lean to this type.
    pub sections: Vec<String>,
}

/// How units are scored and what is noise.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scoring {
    /// Weight of a strong cue.
    pub strong_weight: u32,
    /// Weight of a weak cue.
    pub weak_weight: u32,
    /// Weight of a matching section heading.
    pub section_weight: u32,
    /// Units with fewer words are noise.
    pub min_words: usize,
    /// Phrases that alone make a unit noise.
    #[serde(default)]
    pub noise: Vec<String>,
    /// Regular expressions that make a whole unit noise (bare links, join notices).
    #[serde(default)]
    pub noise_patterns: Vec<String>,
    /// Type of a unit without cues, per source kind (`chat`, `email`, `calendar`, `document`).
    pub default_type: BTreeMap<String, String>,
}

/// A signed edge type between memory objects (OIDA Appendix B).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EdgeSpec {
    /// Name and Neo4j type, e.g. `SUPPORTS`.
    pub name: String,
    /// Signed semantic coefficient.
    pub coefficient: f64,
    /// Meaning of `A -> B`.
    #[serde(default)]
    pub semantics: String,
    /// Counted by the contradiction penalty c.
    #[serde(default)]
    pub penalises: bool,
    /// Counted by the evidence term e.
    #[serde(default)]
    pub evidence: bool,
    /// `A -> B` means A holds B up: counted in B (blocking) of A's open-question urgency h.
    #[serde(default)]
    pub blocking: bool,
}

/// Source authority levels.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Authority {
    /// Document sources.
    pub document: f64,
    /// E-mail.
    pub email: f64,
    /// Calendar.
    pub calendar: f64,
    /// Chat.
    pub chat: f64,
    /// Named levels an event can pick with its `authority` extra.
    #[serde(default)]
    pub levels: BTreeMap<String, f64>,
}

impl Authority {
    /// Authority of a source of this kind, or of the named level when it exists.
    ///
    /// ```
    /// use epigraph_schemas::SourceKind;
    /// let authority = &epigraph_operators::Ontology::bundled().authority;
    /// assert_eq!(authority.of(SourceKind::Chat, None), 0.6);
    /// assert_eq!(authority.of(SourceKind::Chat, Some("binding")), 1.0);
    /// assert_eq!(authority.of(SourceKind::Chat, Some("no such level")), 0.6);
    /// ```
    pub fn of(&self, kind: SourceKind, level: Option<&str>) -> f64 {
        if let Some(value) = level.and_then(|l| self.levels.get(l)) {
            return *value;
        }
        match kind {
            SourceKind::Document => self.document,
            SourceKind::Email => self.email,
            SourceKind::Calendar => self.calendar,
            SourceKind::Chat => self.chat,
        }
    }
}

/// Cues of opinions and predictions.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StatementCues {
    /// Cues of an opinion.
    #[serde(default)]
    pub opinion: Vec<String>,
    /// Cues of a prediction.
    #[serde(default)]
    pub prediction: Vec<String>,
}

/// What a claim value is.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "lowercase")]
pub enum ValueKind {
    /// A money amount.
    Amount,
    /// A calendar date.
    Date,
    /// A count of things.
    Count,
    /// A percentage.
    Percentage,
    /// A status word.
    Status,
    /// A person's name.
    Person,
    /// What a decision picked for a matter (read from the decision's phrasing, not from cues:
    /// see `extract::choice`).
    Choice,
}

impl ValueKind {
    /// Lower-case name, used as the attribute when no attribute cue matches.
    pub fn as_str(self) -> &'static str {
        match self {
            ValueKind::Amount => "amount",
            ValueKind::Date => "date",
            ValueKind::Count => "count",
            ValueKind::Percentage => "percentage",
            ValueKind::Status => "status",
            ValueKind::Person => "person",
            ValueKind::Choice => "choice",
        }
    }
}

/// A claim attribute and the words that name it.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AttributeSpec {
    /// Name, e.g. `launch_date`.
    pub name: String,
    /// Words that name it in a sentence.
    pub cues: Vec<String>,
    /// The kind of value it takes.
    pub value: ValueKind,
    /// How its claims behave in time; when absent, they take the asserting statement's
    /// temporal type. Dynamic claims are replaced by newer ones, the others never are.
    #[serde(default)]
    pub temporal: Option<TemporalType>,
    /// The attribute is a family (growth, customers): each claim's attribute is named after the
    /// cue that found it too (`growth:churn`), so that churn never contradicts uptime.
    #[serde(default)]
    pub qualified: bool,
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
    pub typer: Option<crate::extract::typer::Typer>,
}

/// `[[alias]]`: names the organisation knows to be one entity (nicknames, old names, codes).
/// The first name is the canonical one; every other name seen is linked to it.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AliasSpec {
    /// Kind of the entity, e.g. `Person`.
    pub kind: String,
    /// Its names, canonical first.
    pub names: Vec<String>,
}

/// `[epistemics]`: how statements relate over time (see `ontology/epistemics.toml`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EpistemicsSpec {
    /// Disagreeing claims of different sources within this many days contradict each other.
    pub contradiction_window_days: u32,
    /// Relative tolerance under which two numbers agree.
    pub tolerance: f64,
    /// Phrases that mark a statement as an update of earlier ones.
    pub update_cues: Vec<String>,
    /// Units whose later claim always replaces an earlier different one, cue or not (a later
    /// decision on the same matter is the organisation's current choice).
    #[serde(default)]
    pub latest_wins: Vec<String>,
    /// When two statements are on the same matter.
    pub matter: MatterSpec,
    /// Answering questions.
    pub answers: AnswersSpec,
    /// Statements held up by an open question.
    #[serde(default)]
    pub blocks: BlocksSpec,
    /// Claims compared across sources by the matter they are about, not only by a named subject.
    #[serde(default)]
    pub matters: MattersSpec,
    /// What many sources say in the same words takes part in no judgement.
    #[serde(default)]
    pub boilerplate: BoilerplateSpec,
    /// The same statement in two sources is linked to the earlier one.
    #[serde(default)]
    pub restated: RestatedSpec,
    /// Statements citing another document with a relation ("builds on KEP-753").
    #[serde(default)]
    pub citations: Option<CitationsSpec>,
    /// What questions ask for.
    #[serde(default)]
    pub need: Vec<NeedSpec>,
}

/// `[epistemics.matter]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MatterSpec {
    /// Words ignored when comparing topics.
    pub ignore: Vec<String>,
    /// Shared topic words that make a matter.
    pub min_shared: usize,
    /// Jaccard overlap that makes a matter.
    pub min_jaccard: f64,
    /// Earlier statements compared per entity.
    pub max_lookback: usize,
    /// Only a statement that says it changes something ("instead of", "change of plan", …)
    /// supersedes an earlier decision or plan; without it, a later one on the same matter
    /// stands next to it.
    #[serde(default)]
    pub require_update_cue: bool,
}

/// `[epistemics.answers]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AnswersSpec {
    /// Later statements tried per question and entity.
    pub max_candidates: usize,
    /// Topic words a question and its answer share.
    pub min_shared: usize,
    /// Topic words a question and an answer from another source share (defaults to
    /// `min_shared`): another document shares a word with a question far more easily than the
    /// thread it was asked in.
    #[serde(default)]
    pub min_shared_across_sources: Option<usize>,
}

/// `[epistemics.blocks]`: a statement that says it is held up ("blocked until", "on hold
/// pending", "waiting on") by an open question on its matter. Without the section nothing is
/// blocked.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BlocksSpec {
    /// Phrases saying the statement is held up.
    pub cues: Vec<String>,
    /// Topic words the question and the blocked statement share, besides the entity's own.
    pub min_shared: usize,
    /// Earlier statements of one entity tried, newest first, for one blocked statement.
    pub max_candidates: usize,
}

/// `[epistemics.matters]`: claims whose subject is not a named entity (a document's title stands
/// in for it) are also compared with the claims of other sources on the same attribute and unit
/// when their contexts (the statement's words, and the title's for an unnamed subject) share
/// at least `min_shared` words besides the attributes' own cue words ("€320K SAFE with a €2.2M
/// valuation cap" in "Term sheet summary (Fjord Ventures)" and "The seed round is €200K on a
/// SAFE at a €2.3M valuation cap, led by Fjord Ventures"). Two claims that each name a different
/// entity are never compared this way. Without the section (or with `enabled = false`) claims
/// meet only by subject.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MattersSpec {
    /// Whether claims are compared by matter at all.
    pub enabled: bool,
    /// Context words two claims must share, besides cue words.
    pub min_shared: usize,
    /// Earlier claims compared per blocking group (one attribute, unit and context word), newest
    /// first.
    pub max_lookback: usize,
}

impl Default for MattersSpec {
    fn default() -> Self {
        MattersSpec {
            enabled: false,
            min_shared: 2,
            max_lookback: 32,
        }
    }
}

/// `[epistemics.boilerplate]`: a statement whose normalised text, or whose field (a
/// `Field: value` line with a field of at least `min_field_words` words), is found in more than
/// `max_sources` sources of its tenant is a template's, and takes part in no judgement.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BoilerplateSpec {
    /// Whether boilerplate is recognised at all.
    pub enabled: bool,
    /// Sources a text or field may be in and still be an author's own.
    pub max_sources: usize,
    /// Words a field has at least to count as a form's field.
    pub min_field_words: usize,
}

impl Default for BoilerplateSpec {
    fn default() -> Self {
        BoilerplateSpec {
            enabled: false,
            max_sources: 3,
            min_field_words: 4,
        }
    }
}

/// `[epistemics.restated]`: a memory object whose normalised text is that of a memory object of
/// another, earlier source gets a `SAME_STATEMENT` edge to the earliest one, unless the text is
/// in more than `max_sources` sources (boilerplate) or has fewer than `min_words` words.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RestatedSpec {
    /// Whether restatements are linked at all.
    pub enabled: bool,
    /// Words a restated text has at least.
    pub min_words: usize,
    /// Sources a text may be in and still count as restated rather than boilerplate.
    pub max_sources: usize,
}

impl Default for RestatedSpec {
    fn default() -> Self {
        RestatedSpec {
            enabled: false,
            min_words: 6,
            max_sources: 3,
        }
    }
}

/// `[epistemics.citations]`: a statement naming a document key (`KEP-753`, `PEP 8`, `ADR 004`,
/// a link into `keps/<sig>/753-…`) next to a cue of one of the edges gets that edge to the
/// statement of the cited document it shares most topic words with (see
/// `extract::citations`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CitationsSpec {
    /// Document families whose keys are recognised in text (`kep`, `pep`, `adr`, `rfc`).
    pub families: Vec<String>,
    /// Topic words the citing statement and the cited one must share.
    pub min_shared: usize,
    /// The edges, each with the cues that draw it.
    pub edge: Vec<CitationEdgeSpec>,
}

/// `[[epistemics.citations.edge]]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CitationEdgeSpec {
    /// The relationship type (an edge of `edges.toml`).
    pub name: String,
    /// Phrases that say how the statement relates to what it cites.
    pub cues: Vec<String>,
}

/// `[[epistemics.need]]`: what a question asks for.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NeedSpec {
    /// Name, e.g. `owner`.
    pub name: String,
    /// Phrases of the question that reveal the need.
    pub cues: Vec<String>,
    /// What an answer carries.
    pub answer: AnswerKind,
}

/// What an answer must carry.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AnswerKind {
    /// It names a person.
    Person,
    /// It has a date claim.
    Date,
    /// It has a money claim.
    Amount,
    /// It contains a digit.
    Number,
    /// Any statement that is not a question.
    Statement,
}

/// Every section one ontology file may hold.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct OntologyFile {
    #[serde(default)]
    kind: Vec<EntityKind>,
    #[serde(default)]
    recurring: Option<Recurring>,
    #[serde(default)]
    max_gap: Option<usize>,
    #[serde(default)]
    relation: Vec<RelationFile>,
    #[serde(default)]
    scoring: Option<Scoring>,
    #[serde(default, rename = "type")]
    types: Vec<TypeFile>,
    #[serde(default)]
    edge: Vec<EdgeSpec>,
    #[serde(default)]
    authority: Option<Authority>,
    #[serde(default)]
    statement: Option<StatementCues>,
    #[serde(default)]
    attribute: Vec<AttributeSpec>,
    #[serde(default)]
    statuses: Option<Statuses>,
    #[serde(default)]
    epistemics: Option<EpistemicsSpec>,
    #[serde(default)]
    alias: Vec<AliasSpec>,
    #[serde(default)]
    typer: Option<crate::extract::typer::TyperFile>,
    /// `[priority]`: read by the priority operator's own loader, skipped here.
    #[serde(default, rename = "priority")]
    _priority: Option<toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RelationFile {
    name: String,
    group: String,
    signature: String,
    #[serde(default)]
    cues: Vec<String>,
    #[serde(default)]
    passive_cues: Vec<String>,
    temporal: TemporalType,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TypeFile {
    name: String,
    priority: f64,
    lambda: f64,
    #[serde(default)]
    behaviour: String,
    #[serde(default)]
    role: String,
    temporal_type: TemporalType,
    #[serde(default)]
    strong: Vec<String>,
    #[serde(default)]
    weak: Vec<String>,
    #[serde(default)]
    sections: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Statuses {
    values: Vec<String>,
}

/// The files shipped in `ontology/`, in load order.
const BUNDLED: [(&str, &str); 6] = [
    ("edges.toml", include_str!("../../ontology/edges.toml")),
    (
        "epistemics.toml",
        include_str!("../../ontology/epistemics.toml"),
    ),
    ("kinds.toml", include_str!("../../ontology/kinds.toml")),
    (
        "relations.toml",
        include_str!("../../ontology/relations.toml"),
    ),
    ("sources.toml", include_str!("../../ontology/sources.toml")),
    ("typer.toml", include_str!("../../ontology/typer.toml")),
];
const BUNDLED_TYPES: (&str, &str) = ("types.toml", include_str!("../../ontology/types.toml"));

/// Parses an epistemic type name such as `DECISION` (case-insensitive).
///
/// ```
/// use epigraph_operators::{EpistemicType, ontology::parse_type};
/// assert_eq!(parse_type("question"), Some(EpistemicType::Question));
/// assert_eq!(parse_type("RUMOUR"), None);
/// ```
pub fn parse_type(name: &str) -> Option<EpistemicType> {
    EpistemicType::ALL
        .into_iter()
        .find(|t| t.name().eq_ignore_ascii_case(name))
}

impl Ontology {
    /// The ontology shipped with the project (`ontology/*.toml`).
    ///
    /// ```
    /// let ontology = epigraph_operators::Ontology::bundled();
    /// assert_eq!(ontology.types.len(), 9);
    /// assert!(ontology.kind("Person").is_some());
    /// ```
    pub fn bundled() -> Self {
        Self::from_sources(Self::bundled_sources()).expect("the bundled ontology is valid (tested)")
    }

    /// The bundled `(path, text)` files, to extend in tests with [`Ontology::from_sources`].
    pub fn bundled_sources_for_tests() -> Vec<(PathBuf, String)> {
        Self::bundled_sources()
    }

    fn bundled_sources() -> Vec<(PathBuf, String)> {
        BUNDLED
            .iter()
            .chain(std::iter::once(&BUNDLED_TYPES))
            .map(|(name, text)| (PathBuf::from("ontology").join(name), text.to_string()))
            .collect()
    }

    /// Loads the ontology: the `*.toml` files of `dir` (sorted by name) instead of the bundled
    /// ones when `dir` is given, then every `*.toml` file of each `extra` folder on top.
    pub fn load(dir: Option<&Path>, extra: &[PathBuf]) -> Result<Self, OntologyError> {
        let mut sources = match dir {
            Some(dir) => read_dir_sources(dir)?,
            None => Self::bundled_sources(),
        };
        for folder in extra {
            sources.extend(read_dir_sources(folder)?);
        }
        Self::from_sources(sources)
    }

    /// Builds an ontology from `(path, toml text)` pairs, later files extending or replacing
    /// earlier ones.
    pub fn from_sources(sources: Vec<(PathBuf, String)>) -> Result<Self, OntologyError> {
        let mut merged = Merged::default();
        for (path, text) in sources {
            let file: OntologyFile = toml::from_str(&text).map_err(|e| OntologyError::Parse {
                path: path.clone(),
                message: e.to_string(),
            })?;
            merged.add(file)?;
        }
        merged.finish()
    }

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

fn read_dir_sources(dir: &Path) -> Result<Vec<(PathBuf, String)>, OntologyError> {
    let read_err = |source| OntologyError::Read {
        path: dir.to_path_buf(),
        source,
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(read_err)?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            std::fs::read_to_string(&path)
                .map(|text| (path.clone(), text))
                .map_err(|source| OntologyError::Read { path, source })
        })
        .collect()
}

#[derive(Default)]
struct Merged {
    kinds: Vec<EntityKind>,
    recurring: Option<Recurring>,
    relations: Vec<RelationSpec>,
    max_gap: Option<usize>,
    types: Vec<TypeSpec>,
    scoring: Option<Scoring>,
    edges: Vec<EdgeSpec>,
    authority: Option<Authority>,
    statement: Option<StatementCues>,
    attributes: Vec<AttributeSpec>,
    statuses: Option<Vec<String>>,
    epistemics: Option<EpistemicsSpec>,
    aliases: Vec<AliasSpec>,
    typer: Option<crate::extract::typer::TyperFile>,
}

fn upsert_by<T>(list: &mut Vec<T>, item: T, same: impl Fn(&T, &T) -> bool) {
    match list.iter_mut().find(|existing| same(existing, &item)) {
        Some(existing) => *existing = item,
        None => list.push(item),
    }
}

impl Merged {
    fn add(&mut self, file: OntologyFile) -> Result<(), OntologyError> {
        for kind in file.kind {
            upsert_by(&mut self.kinds, kind, |a, b| a.name == b.name);
        }
        for relation in file.relation {
            let spec = parse_relation(relation)?;
            upsert_by(&mut self.relations, spec, |a, b| a.name == b.name);
        }
        for t in file.types {
            let memory_type = parse_type(&t.name).ok_or_else(|| {
                OntologyError::Invalid(format!(
                    "unknown epistemic type {:?} (the nine are {})",
                    t.name,
                    EpistemicType::ALL.map(|t| t.name()).join(", ")
                ))
            })?;
            let spec = TypeSpec {
                memory_type,
                priority: t.priority,
                lambda: t.lambda,
                behaviour: t.behaviour,
                role: t.role,
                temporal_type: t.temporal_type,
                strong: t.strong,
                weak: t.weak,
                sections: t.sections.iter().map(|s| s.to_lowercase()).collect(),
            };
            upsert_by(&mut self.types, spec, |a, b| a.memory_type == b.memory_type);
        }
        for edge in file.edge {
            upsert_by(&mut self.edges, edge, |a, b| a.name == b.name);
        }
        if let Some(epistemics) = file.epistemics {
            self.epistemics = Some(epistemics);
        }
        self.aliases.extend(file.alias);
        for attribute in file.attribute {
            upsert_by(&mut self.attributes, attribute, |a, b| a.name == b.name);
        }
        self.max_gap = file.max_gap.or(self.max_gap);
        self.recurring = file.recurring.or(self.recurring.take());
        self.scoring = file.scoring.or(self.scoring.take());
        self.authority = file.authority.or(self.authority.take());
        self.statement = file.statement.or(self.statement.take());
        self.statuses = file.statuses.map(|s| s.values).or(self.statuses.take());
        self.typer = file.typer.or(self.typer.take());
        Ok(())
    }

    fn finish(self) -> Result<Ontology, OntologyError> {
        let invalid = |m: String| Err(OntologyError::Invalid(m));
        let kinds: BTreeSet<&str> = self.kinds.iter().map(|k| k.name.as_str()).collect();
        for relation in &self.relations {
            for kind in relation.from.iter().chain(&relation.to) {
                if !kinds.contains(kind.as_str()) {
                    return invalid(format!(
                        "relation {} names kind {kind:?}, which is not declared",
                        relation.name
                    ));
                }
            }
            if relation.cues.is_empty() && relation.passive_cues.is_empty() {
                return invalid(format!("relation {} has no cues", relation.name));
            }
        }
        if let Some(recurring) = &self.recurring
            && !kinds.contains(recurring.kind.as_str())
        {
            return invalid(format!(
                "[recurring] kind {:?} is not declared",
                recurring.kind
            ));
        }
        for alias in &self.aliases {
            if !kinds.contains(alias.kind.as_str()) || alias.names.len() < 2 {
                return invalid(format!(
                    "[[alias]] {:?}: the kind must be declared and at least two names given",
                    alias.names
                ));
            }
        }
        for kind in &self.kinds {
            if !is_label(&kind.name) {
                return invalid(format!("kind name {:?} is not a valid label", kind.name));
            }
        }
        if let Some(missing) = EpistemicType::ALL
            .into_iter()
            .find(|t| !self.types.iter().any(|s| s.memory_type == *t))
        {
            return invalid(format!(
                "epistemic type {} is not configured",
                missing.name()
            ));
        }
        for edge in &self.edges {
            if !is_label(&edge.name) || !(-1.0..=1.0).contains(&edge.coefficient) {
                return invalid(format!(
                    "edge {:?}: the name must be a label and the coefficient within [-1, 1]",
                    edge.name
                ));
            }
        }
        let scoring = self
            .scoring
            .ok_or_else(|| OntologyError::Invalid("no [scoring] section".into()))?;
        for name in scoring.default_type.values() {
            if parse_type(name).is_none() {
                return invalid(format!("default_type {name:?} is not an epistemic type"));
            }
        }
        let authority = self
            .authority
            .ok_or_else(|| OntologyError::Invalid("no [authority] section".into()))?;
        let levels = [
            authority.document,
            authority.email,
            authority.calendar,
            authority.chat,
        ];
        if levels
            .iter()
            .chain(authority.levels.values())
            .any(|v| !(0.0..=1.0).contains(v))
        {
            return invalid("authority levels must lie within [0, 1]".into());
        }
        Ok(Ontology {
            kinds: self.kinds,
            recurring: self.recurring,
            relations: self.relations,
            max_gap: self.max_gap.unwrap_or(48),
            types: EpistemicType::ALL
                .into_iter()
                .filter_map(|t| self.types.iter().find(|s| s.memory_type == t).cloned())
                .collect(),
            scoring,
            edges: self.edges,
            authority,
            statement: self.statement.unwrap_or_default(),
            attributes: self.attributes,
            aliases: self.aliases,
            epistemics: self
                .epistemics
                .ok_or_else(|| OntologyError::Invalid("[epistemics] is not configured".into()))?,
            statuses: self.statuses.unwrap_or_default(),
            typer: match self.typer {
                Some(file) if file.enabled => Some(
                    crate::extract::typer::Typer::from_spec(file)
                        .map_err(|e| OntologyError::Invalid(e.to_string()))?,
                ),
                _ => None,
            },
        })
    }
}

fn is_label(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Parses `Person --works_on--> Project|Product`.
fn parse_relation(file: RelationFile) -> Result<RelationSpec, OntologyError> {
    let bad = || {
        OntologyError::Invalid(format!(
            "relation {}: signature {:?} is not of the form `Kind|Kind --{}--> Kind|Kind`",
            file.name, file.signature, file.name
        ))
    };
    let (from, rest) = file.signature.split_once("--").ok_or_else(bad)?;
    let (name, to) = rest.split_once("-->").ok_or_else(bad)?;
    if name.trim() != file.name || !is_label(&file.name) {
        return Err(bad());
    }
    let kinds = |s: &str| -> Vec<String> {
        s.split('|')
            .map(|k| k.trim().to_string())
            .filter(|k| !k.is_empty())
            .collect()
    };
    let (from, to) = (kinds(from), kinds(to));
    if from.is_empty() || to.is_empty() {
        return Err(bad());
    }
    Ok(RelationSpec {
        name: file.name,
        group: file.group,
        from,
        to,
        cues: file.cues,
        passive_cues: file.passive_cues,
        temporal: file.temporal,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_ontology_has_the_oida_priors_and_coefficients() {
        let ontology = Ontology::bundled();
        let prior = |t| ontology.type_spec(t).priority;
        assert_eq!(prior(EpistemicType::Decision), 1.0);
        assert_eq!(prior(EpistemicType::Question), 0.3);
        assert_eq!(ontology.type_spec(EpistemicType::Question).lambda, -0.010);
        assert_eq!(ontology.edge("SUPPORTS").unwrap().coefficient, 1.0);
        assert_eq!(ontology.edge("CONTRADICTS").unwrap().coefficient, -0.6);
        assert!(ontology.edge("CONTRADICTS").unwrap().penalises);
        let works_on = ontology.relation("works_on").unwrap();
        assert!(works_on.fits("Person", "Project"));
        assert!(!works_on.fits("Project", "Person"));
        assert_eq!(
            ontology.default_type(SourceKind::Chat),
            EpistemicType::Observation
        );
    }

    #[test]
    fn a_kind_and_a_relation_are_added_without_code() {
        let mut sources = Ontology::bundled_sources();
        sources.push((
            "contracts.toml".into(),
            r#"
            [[kind]]
            name = "Contract"
            name_suffixes = ["Agreement", "Contract"]

            [[relation]]
            name = "party_to"
            group = "commerce"
            signature = "Organization --party_to--> Contract"
            cues = ["signed", "is party to", "is a party to"]
            temporal = "dynamic"
            "#
            .into(),
        ));
        let ontology = Ontology::from_sources(sources).unwrap();
        assert!(ontology.kind("Contract").is_some());
        assert!(
            ontology
                .relation("party_to")
                .unwrap()
                .fits("Organization", "Contract")
        );
    }

    #[test]
    fn invalid_ontologies_are_refused_with_the_reason() {
        let with = |extra: &str| {
            let mut sources = Ontology::bundled_sources();
            sources.push(("extra.toml".into(), extra.into()));
            Ontology::from_sources(sources).unwrap_err().to_string()
        };
        let unknown_kind = with(
            "[[relation]]\nname = \"x\"\ngroup = \"g\"\nsignature = \"Person --x--> Spaceship\"\ncues = [\"y\"]\ntemporal = \"static\"",
        );
        assert!(unknown_kind.contains("Spaceship"), "{unknown_kind}");
        let bad_signature = with(
            "[[relation]]\nname = \"x\"\ngroup = \"g\"\nsignature = \"Person -> Person\"\ncues = [\"y\"]\ntemporal = \"static\"",
        );
        assert!(bad_signature.contains("signature"), "{bad_signature}");
        let bad_type = with(
            "[[type]]\nname = \"RUMOUR\"\npriority = 0.1\nlambda = 0.0\ntemporal_type = \"dynamic\"",
        );
        assert!(bad_type.contains("RUMOUR"), "{bad_type}");
        let bad_field = with("[[kind]]\nname = \"X\"\ncolour = \"red\"");
        assert!(bad_field.contains("extra.toml"), "{bad_field}");
        let bad_edge = with("[[edge]]\nname = \"LOVES\"\ncoefficient = 3.0");
        assert!(bad_edge.contains("LOVES"), "{bad_edge}");
    }
}
