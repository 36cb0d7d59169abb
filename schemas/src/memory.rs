//! The memory objects' vocabulary shared by the pipeline that writes them and the query core
//! that reads them: the nine epistemic types ([`EpistemicType`]) and where an object stands in
//! time ([`Standing`]). One definition, so the writer and every reader agree on the words.
//!
//! In the graph and the APIs a type is written by its upper-case name (`DECISION`, see
//! [`EpistemicType::name`], and the [`type_name`] serde adapter for fields that carry it) and a
//! standing in lower case (`superseded`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The nine epistemic types of memory objects (OIDA Table 1).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub enum EpistemicType {
    /// A choice the organisation made.
    Decision,
    /// A rule or limit that must hold.
    Constraint,
    /// A fact or measurement offered in support of something.
    Evidence,
    /// A story or description without a stronger type (the default: what nothing typed).
    #[default]
    Narrative,
    /// An intended future action.
    Plan,
    /// A judgement of quality or outcome.
    Evaluation,
    /// Something noticed.
    Observation,
    /// A belief not yet confirmed.
    Hypothesis,
    /// An open information need.
    Question,
}

impl EpistemicType {
    /// The nine types in the order of OIDA Table 1 (also the tie-breaking order).
    pub const ALL: [EpistemicType; 9] = [
        EpistemicType::Decision,
        EpistemicType::Constraint,
        EpistemicType::Evidence,
        EpistemicType::Narrative,
        EpistemicType::Plan,
        EpistemicType::Evaluation,
        EpistemicType::Observation,
        EpistemicType::Hypothesis,
        EpistemicType::Question,
    ];

    /// The Neo4j label and display name, e.g. `Decision`.
    pub fn label(self) -> &'static str {
        match self {
            EpistemicType::Decision => "Decision",
            EpistemicType::Constraint => "Constraint",
            EpistemicType::Evidence => "Evidence",
            EpistemicType::Narrative => "Narrative",
            EpistemicType::Plan => "Plan",
            EpistemicType::Evaluation => "Evaluation",
            EpistemicType::Observation => "Observation",
            EpistemicType::Hypothesis => "Hypothesis",
            EpistemicType::Question => "Question",
        }
    }

    /// The upper-case name used in APIs and LanceDB rows, e.g. `DECISION`.
    ///
    /// ```
    /// use epigraph_schemas::memory::EpistemicType;
    /// assert_eq!(EpistemicType::Question.name(), "QUESTION");
    /// ```
    pub fn name(self) -> String {
        self.label().to_ascii_uppercase()
    }
}

/// Where a memory object or claim stands in time, as the epistemic operators judge it
/// (`epigraph_operators::epistemic`). Nothing is ever deleted for being out of date: it is demoted.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Standing {
    /// Holds now.
    #[default]
    Current,
    /// Replaced by a later statement on the same matter (it has `t_invalid`).
    Superseded,
    /// A question nobody has answered yet.
    Open,
    /// A question a later statement answered (closed at `t_invalid`).
    Answered,
}

impl Standing {
    /// Lower-case name, e.g. `superseded`.
    ///
    /// ```
    /// assert_eq!(epigraph_schemas::memory::Standing::Answered.as_str(), "answered");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Standing::Current => "current",
            Standing::Superseded => "superseded",
            Standing::Open => "open",
            Standing::Answered => "answered",
        }
    }
}

impl fmt::Display for EpistemicType {
    /// The upper-case name, as in the graph and the APIs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// A word that is not one of the nine epistemic types.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0:?} is not an epistemic type (DECISION, CONSTRAINT, EVIDENCE, NARRATIVE, PLAN, EVALUATION, OBSERVATION, HYPOTHESIS, QUESTION)"
)]
pub struct UnknownType(pub String);

impl FromStr for EpistemicType {
    type Err = UnknownType;

    /// Any case: `DECISION`, `Decision`, `decision`.
    ///
    /// ```
    /// use epigraph_schemas::memory::EpistemicType;
    /// assert_eq!("decision".parse::<EpistemicType>(), Ok(EpistemicType::Decision));
    /// assert_eq!("QUESTION".parse::<EpistemicType>(), Ok(EpistemicType::Question));
    /// assert!("rumour".parse::<EpistemicType>().is_err());
    /// ```
    fn from_str(word: &str) -> Result<Self, Self::Err> {
        EpistemicType::ALL
            .into_iter()
            .find(|t| t.label().eq_ignore_ascii_case(word.trim()))
            .ok_or_else(|| UnknownType(word.to_string()))
    }
}

/// Serde adapter writing an [`EpistemicType`] by its upper-case name (`DECISION`) and reading
/// any case, for the fields of the graph's rows and the APIs (`#[serde(with = "type_name")]`).
///
/// ```
/// use epigraph_schemas::memory::{EpistemicType, type_name};
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct Row { #[serde(with = "type_name")] memory_type: EpistemicType }
/// let row: Row = serde_json::from_str(r#"{"memory_type": "PLAN"}"#).unwrap();
/// assert_eq!(row.memory_type, EpistemicType::Plan);
/// assert_eq!(serde_json::to_string(&row).unwrap(), r#"{"memory_type":"PLAN"}"#);
/// ```
pub mod type_name {
    use super::EpistemicType;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the upper-case name.
    pub fn serialize<S: Serializer>(t: &EpistemicType, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&t.name())
    }

    /// Reads any case; an unknown word is an error naming the nine types.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<EpistemicType, D::Error> {
        let word = String::deserialize(d)?;
        word.parse().map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for Standing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A word that is not a standing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a standing (current, superseded, open, answered)")]
pub struct UnknownStanding(pub String);

impl FromStr for Standing {
    type Err = UnknownStanding;

    /// ```
    /// use epigraph_schemas::memory::Standing;
    /// assert_eq!("superseded".parse::<Standing>(), Ok(Standing::Superseded));
    /// assert!("stale".parse::<Standing>().is_err());
    /// ```
    fn from_str(word: &str) -> Result<Self, Self::Err> {
        [
            Standing::Current,
            Standing::Superseded,
            Standing::Open,
            Standing::Answered,
        ]
        .into_iter()
        .find(|s| s.as_str().eq_ignore_ascii_case(word.trim()))
        .ok_or_else(|| UnknownStanding(word.to_string()))
    }
}
