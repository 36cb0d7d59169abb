//! The records written to `events.jsonl` and `labels/*.jsonl`: the event in the webhook format
//! and the ground truth an evaluation compares the pipeline's output with.
//!
//! A label points at a unit by `(source_id, text)`: `text` is an exact substring of the body of
//! the event that carries it. Units are labelled for every version of a source (with the event
//! line index in `version`), so an evaluation can select the final state; claims, supersessions,
//! contradictions, answers, blocks and relations are labelled once, at the version that introduced them,
//! and their text stays in every later version of that source (sources carrying them are never
//! deleted).

use std::collections::BTreeMap;

use serde::Serialize;

/// A sender, recipient or attendee.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Party {
    /// Display name.
    pub name: String,
    /// E-mail address or chat handle.
    pub address: String,
}

/// One line of `events.jsonl`, exactly the `POST /v1/ingest` body.
#[derive(Clone, Debug, Serialize)]
pub struct Event {
    /// `chat`, `email`, `calendar` or `document`.
    pub kind: &'static str,
    /// Stable id of the item; the same id again is an edit or a delete.
    pub source_id: String,
    /// `upsert` or `delete`.
    pub op: &'static str,
    /// Channel, subject, meeting name or document title.
    pub title: String,
    /// Plain text or Markdown (empty for a delete).
    pub body: String,
    /// Milliseconds since the Unix epoch; strictly increasing along the file.
    pub occurred_at: i64,
    /// Who wrote it.
    pub authors: Vec<Party>,
    /// Recipients, attendees, channel members.
    pub participants: Vec<Party>,
    /// Channel, e-mail thread, calendar series or document folder.
    pub thread_id: String,
    /// Always empty.
    pub links: Vec<serde_json::Value>,
    /// `written` for a revised document or calendar entry: when each of its units was
    /// written (`start-end@ms` in characters of the body, `;`-separated); otherwise empty.
    pub extras: BTreeMap<String, String>,
}

/// A mention of an entity inside a unit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mention {
    /// The surface form, a substring of the unit text.
    pub text: String,
    /// The entity's id in `entities.jsonl`.
    pub entity_id: String,
}

/// `labels/units.jsonl`: one memory unit (a sentence or a list item) of one version.
#[derive(Clone, Debug, Serialize)]
pub struct UnitLabel {
    /// The source it belongs to.
    pub source_id: String,
    /// Exact substring of the body.
    pub text: String,
    /// `DECISION` … `QUESTION`, or `NOISE`.
    #[serde(rename = "type")]
    pub memory_type: &'static str,
    /// `fact`, `opinion` or `prediction`.
    pub statement_type: &'static str,
    /// `static`, `dynamic` or `atemporal`.
    pub temporal_type: &'static str,
    /// Entities mentioned.
    pub entities: Vec<Mention>,
    /// 0-based line index of the event carrying this version in `events.jsonl`.
    pub version: u64,
}

/// A pointer to a unit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TextRef {
    /// Source id.
    pub source_id: String,
    /// Unit text.
    pub text: String,
}

/// `labels/claims.jsonl`: an attribute/value claim made by a unit.
#[derive(Clone, Debug, Serialize)]
pub struct ClaimLabel {
    /// Source id.
    pub source_id: String,
    /// Unit text.
    pub text: String,
    /// Entity id or matter id (`matter:N`).
    pub subject: String,
    /// `launch_date`, `ask_amount`, `valuation_cap`, `headcount`, `status`, `owner`, `budget`,
    /// `decision`, `churn_rate`, …
    pub attribute: String,
    /// Normalised value: an integer amount, an ISO date, a count, a status word, an entity id.
    pub value: String,
    /// `EUR`, `USD`, `%`, `date`, `count`, `status`, `entity`, `choice`.
    pub unit: &'static str,
    /// When the claim starts to hold (the event's `occurred_at`).
    pub valid_from: i64,
}

/// `labels/supersessions.jsonl`: a newer unit replaces an older one on the same matter.
#[derive(Clone, Debug, Serialize)]
pub struct SupersessionLabel {
    /// The newer unit.
    pub newer: TextRef,
    /// The unit it replaces.
    pub older: TextRef,
    /// `<project id>/<what is decided>` for decisions, `<subject>/<attribute>` for claims.
    pub matter: String,
}

/// `labels/contradictions.jsonl`: two current units that disagree.
#[derive(Clone, Debug, Serialize)]
pub struct ContradictionLabel {
    /// One side.
    pub a: TextRef,
    /// The other side.
    pub b: TextRef,
    /// What they disagree about.
    pub subject: String,
    /// Which attribute.
    pub attribute: String,
}

/// `labels/answers.jsonl`: a unit answering an open question.
#[derive(Clone, Debug, Serialize)]
pub struct AnswerLabel {
    /// The question.
    pub question: TextRef,
    /// The answer.
    pub answer: TextRef,
}

/// `labels/blocks.jsonl`: a unit that says it is held up until an open question is answered.
#[derive(Clone, Debug, Serialize)]
pub struct BlockLabel {
    /// The open question.
    pub question: TextRef,
    /// The held-up unit.
    pub blocked: TextRef,
}

/// `labels/relations.jsonl`: a relation stated by a unit.
#[derive(Clone, Debug, Serialize)]
pub struct RelationLabel {
    /// Source id.
    pub source_id: String,
    /// Unit text.
    pub text: String,
    /// Entity id.
    pub subject: String,
    /// `works_on`, `manages`, `reports_to`, `member_of`, `owns`, `located_in`, `customer_of`,
    /// `invests_in`.
    pub predicate: &'static str,
    /// Entity id.
    pub object: String,
}

/// `labels/entities.jsonl`: identity ground truth.
#[derive(Clone, Debug, Serialize)]
pub struct EntityLabel {
    /// Stable id.
    pub entity_id: String,
    /// `Person`, `Organization`, …
    pub kind: crate::org::EntityKind,
    /// Canonical name.
    pub canonical: String,
    /// Every surface form written at least once (the canonical name included).
    pub aliases: Vec<String>,
    /// E-mail addresses, chat handles, domains.
    pub addresses: Vec<String>,
}

/// The labels one event introduces.
#[derive(Clone, Debug, Default)]
pub struct LabelSet {
    /// Units of this version.
    pub units: Vec<UnitLabel>,
    /// Claims introduced.
    pub claims: Vec<ClaimLabel>,
    /// Supersessions introduced.
    pub supersessions: Vec<SupersessionLabel>,
    /// Contradictions introduced.
    pub contradictions: Vec<ContradictionLabel>,
    /// Answers introduced.
    pub answers: Vec<AnswerLabel>,
    /// Blocks introduced.
    pub blocks: Vec<BlockLabel>,
    /// Relations introduced.
    pub relations: Vec<RelationLabel>,
}

impl LabelSet {
    /// True when nothing but units is labelled (the source may be deleted without breaking a
    /// pointer from another label).
    pub fn only_units(&self) -> bool {
        self.claims.is_empty()
            && self.supersessions.is_empty()
            && self.contradictions.is_empty()
            && self.answers.is_empty()
            && self.blocks.is_empty()
            && self.relations.is_empty()
    }
}

/// One generated event with the labels it introduces.
#[derive(Clone, Debug)]
pub struct Generated {
    /// 0-based line index in `events.jsonl`.
    pub line: u64,
    /// The event.
    pub event: Event,
    /// True when the event is a new version of a source seen before (an edit).
    pub edit: bool,
    /// Its labels.
    pub labels: LabelSet,
}
