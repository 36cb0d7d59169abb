//! The vocabulary: entity kinds, the closed relation vocabulary with signatures, the nine
//! epistemic types with their priors and cues, unit scoring, statement cues, claim attributes
//! and configured aliases.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::model::{EpistemicType, TemporalType};

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
    /// The side that holds at most one such relation at a time (`reports_to`: a person
    /// reports to one manager), so a newer statement with another partner ends the older
    /// one; `None` when many hold at once.
    pub exclusive: Option<Exclusive>,
    /// Neo4j types of the relations this one ends between the same two entities
    /// (`left` ends `WORKS_ON`, `MEMBER_OF` and `MANAGES`).
    pub ends: Vec<String>,
}

/// Which end of an exclusive relation has one partner at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Exclusive {
    /// The start holds one at a time (`Maya --reports_to--> Tom`: Maya has one manager).
    From,
    /// The end has one at a time (`Maya --manages--> Atlas`: Atlas has one manager).
    To,
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
