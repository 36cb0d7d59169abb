//! What the graph reads answer: memory cards with their epistemic edges and priority terms,
//! entity cards, contradiction pairs, answered questions, nodes, edges and subgraphs.

use std::collections::BTreeMap;

use epigraph_schemas::memory::{EpistemicType, Standing};
use serde::{Deserialize, Serialize};

/// One end of an epistemic edge (`CONTRADICTS`, `SUPERSEDES`, `ANSWERS`) with the edge's times
/// and why it was drawn.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct EdgeRef {
    /// The memory object at the other end.
    pub id: String,
    /// When the edge became valid (ms since the Unix epoch).
    pub t_valid: Option<i64>,
    /// When it stopped being valid.
    pub t_invalid: Option<i64>,
    /// When epigraph learned it.
    pub recorded_at: Option<i64>,
    /// Why the edge was drawn, in words (the attribute and values of the claims compared, the
    /// shared topic words, the cue of a citation); empty on edges written before reasons were
    /// kept.
    #[serde(default)]
    pub evidence: Vec<String>,
}

/// A memory object as the query service shows it: content, provenance, validity, priority and
/// its epistemic edges.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct MemoryCard {
    /// Memory object id.
    pub id: String,
    /// Epistemic type, upper case: `DECISION`, `CONSTRAINT`, `EVIDENCE`, `NARRATIVE`, `PLAN`,
    /// `EVALUATION`, `OBSERVATION`, `HYPOTHESIS` or `QUESTION`.
    #[serde(with = "epigraph_schemas::memory::type_name")]
    #[schema(value_type = String, example = "DECISION")]
    pub memory_type: EpistemicType,
    /// The statement.
    pub text: String,
    /// Title of its source.
    pub title: Option<String>,
    /// Source item id (provenance).
    pub source_id: String,
    /// Connector family of the source (`document`, `chat`, …).
    pub source_kind: Option<String>,
    /// When the source was written (ms since the Unix epoch).
    pub occurred_at: Option<i64>,
    /// `current`, `superseded`, `open` or `answered`.
    #[schema(value_type = String, example = "current")]
    pub standing: Standing,
    /// Priority K in [0, 1] (Eq. 1), once computed.
    pub k: Option<f64>,
    /// The terms of K, once computed: why it stands where it does.
    #[serde(default)]
    pub k_terms: Option<PriorityTerms>,
    /// Valid from (ms since the Unix epoch).
    pub t_valid: Option<i64>,
    /// Valid until.
    pub t_invalid: Option<i64>,
    /// Recorded time.
    pub recorded_at: Option<i64>,
    /// Section of the source it was read in.
    pub section: Option<String>,
    /// Memory objects it contradicts (the edge exists both ways).
    #[serde(default)]
    pub contradicts: Vec<EdgeRef>,
    /// Later memory objects that supersede it.
    #[serde(default)]
    pub superseded_by: Vec<EdgeRef>,
    /// Earlier memory objects it supersedes.
    #[serde(default)]
    pub supersedes: Vec<EdgeRef>,
    /// Later statements that carried out what it announced (`IMPLEMENTS` edges into it: "``x``
    /// is deprecated", then "``x`` is removed"): the announcement came true, the later statement
    /// is the state now.
    #[serde(default)]
    pub implemented_by: Vec<EdgeRef>,
    /// Statements that answer it (for questions).
    #[serde(default)]
    pub answered_by: Vec<EdgeRef>,
    /// Questions it answers.
    #[serde(default)]
    pub answers: Vec<EdgeRef>,
    /// Statements it holds up (for open questions): `BLOCKS` edges; a block ended when the
    /// question was answered has `t_invalid`.
    #[serde(default)]
    pub blocks: Vec<EdgeRef>,
    /// Open questions holding it up.
    #[serde(default)]
    pub blocked_by: Vec<EdgeRef>,
    /// Number of `SUPPORTS` edges pointing at it.
    #[serde(default)]
    pub supported: i64,
    /// Claims it asserts.
    #[serde(default)]
    pub claims: Vec<ClaimRef>,
    /// The status line of its source when the source declares itself retired (an ADR or PEP
    /// header such as `Status: Withdrawn` or `Superseded-By: 342`).
    #[serde(default)]
    pub source_status: Option<String>,
    /// Later documents that replaced its source (a `Superseded-By:` or `Replaces:` header):
    /// each edge's `id` is the newer document's `source_id`.
    #[serde(default)]
    pub source_superseded_by: Vec<EdgeRef>,
    /// The original this statement is a copy of (a `SAME_STATEMENT` edge: the same text,
    /// normalised, written earlier in another source), if it is one.
    #[serde(default)]
    pub restates: Option<String>,
    /// The other memory objects that say the same (the original and every copy of it, this one
    /// excepted), in any source.
    #[serde(default)]
    pub restated: Vec<Restatement>,
}

/// Another memory object saying the same statement (`SAME_STATEMENT`), in another source.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Restatement {
    /// Memory object id.
    pub id: String,
    /// Its source item id.
    pub source_id: Option<String>,
    /// Its source's title.
    pub title: Option<String>,
}

impl MemoryCard {
    /// The statement it says: the original of its copies (its own id when it is no copy).
    /// Memory objects of one statement share it, so search shows one of them.
    ///
    /// ```
    /// use epigraph_query::graph::MemoryCard;
    /// let original = MemoryCard { id: "m1".into(), ..Default::default() };
    /// let copy = MemoryCard { id: "m7".into(), restates: Some("m1".into()), ..Default::default() };
    /// assert_eq!(original.statement(), copy.statement());
    /// ```
    pub fn statement(&self) -> &str {
        self.restates.as_deref().unwrap_or(&self.id)
    }
}

/// The terms of a node's K (OIDA Eq. 1, docs/priority.md) as the pipeline wrote them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PriorityTerms {
    /// Type prior s.
    pub s: Option<f64>,
    /// Open-question urgency h.
    pub h: Option<f64>,
    /// Usage activation u (recent retrievals).
    pub u: Option<f64>,
    /// Evidence activation e (supporting edges).
    pub e: Option<f64>,
    /// Graph influence g.
    pub g: Option<f64>,
    /// Penalty c: contradictions, supersessions, a retired source.
    pub c: Option<f64>,
    /// The decay force λ·Δt·K.
    pub decay: Option<f64>,
    /// Δt, the node's age in days (capped).
    pub dt: Option<f64>,
    /// K* before the clamp to [0, 1]: equal to K inside it; above 1 (or below 0) it says how far
    /// the terms carry a saturated node past the bound, and orders nodes of equal K.
    pub unclamped: Option<f64>,
}

/// A claim asserted by a memory object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ClaimRef {
    /// Name of the subject as written.
    pub subject: Option<String>,
    /// Attribute, e.g. `launch_date`.
    pub attribute: Option<String>,
    /// Value as normalised.
    pub value: Option<String>,
    /// Unit (`EUR`, `date`, …).
    pub unit: Option<String>,
    /// Qualifier (`not`, `cap`, …).
    pub qualifier: Option<String>,
}

/// An entity with the names it is known by, merged across its identity component.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct EntityCard {
    /// Canonical entity id.
    pub id: String,
    /// Kind (`Person`, `Project`, …).
    pub kind: String,
    /// Canonical name.
    pub name: String,
    /// Every alias of the component.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// Every address (e-mail, chat user) of the component.
    #[serde(default)]
    pub addresses: Vec<String>,
    /// Mentions of the canonical entity.
    pub mentions: Option<i64>,
    /// Ids of the entities merged into it by identity resolution (`SAME_AS`).
    #[serde(default)]
    pub merged: Vec<String>,
    /// The same merges with their evidence: why identity resolution joined each member.
    #[serde(default)]
    pub identity_links: Vec<IdentityLink>,
    /// Vocabulary relations of the component's members.
    #[serde(default)]
    pub relations: Vec<EntityRelation>,
}

/// An entity merged into a canonical one (`SAME_AS`), and why.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct IdentityLink {
    /// The merged entity's id.
    pub id: String,
    /// Its name.
    pub name: Option<String>,
    /// The evidence, in words: each reason linking it to another entity of the component
    /// ("same address maya@x — m. chen", "names \"fred mazur\" and \"frederick mazur\" — …",
    /// "a reviewer said the same — …", "a stated alias — …").
    #[serde(default)]
    pub evidence: Vec<String>,
}

/// A vocabulary relation seen from an entity.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct EntityRelation {
    /// Relationship type (`WORKS_ON`, …).
    #[serde(rename = "type")]
    pub rel_type: String,
    /// `out` or `in`.
    pub direction: String,
    /// The entity at the other end.
    pub id: String,
    /// Its name.
    pub name: Option<String>,
    /// Valid from.
    pub t_valid: Option<i64>,
    /// Valid until.
    pub t_invalid: Option<i64>,
    /// Number of sources stating it.
    pub support: Option<i64>,
}

/// A contradiction: two memory objects that disagree, with the edge's times.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ContradictionPair {
    /// One side (the smaller id).
    pub a: MemoryCard,
    /// The other side.
    pub b: MemoryCard,
    /// When the disagreement began.
    pub t_valid: Option<i64>,
    /// When one side stopped being current, if it did.
    pub t_invalid: Option<i64>,
    /// When epigraph learned it.
    pub recorded_at: Option<i64>,
    /// Why the two disagree, in words ("ask_amount: 200000 EUR here, 320000 EUR there, both
    /// current"), from `a`'s side; empty on edges written before reasons were kept.
    #[serde(default)]
    pub why: Vec<String>,
}

/// A question and the statement that answered it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AnsweredQuestion {
    /// The question.
    pub question: MemoryCard,
    /// The statement whose `ANSWERS` edge closed it.
    pub answer: MemoryCard,
    /// When it was answered (the answer's valid time).
    pub answered_at: Option<i64>,
    /// `"confirmed"` or `"asserted"` when a reviewer has had a say on the answer.
    pub review: Option<String>,
}

/// One memory object's editable fields and version (see [`super::GraphReader::memory_state`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryState {
    /// Node id.
    pub id: String,
    /// Epistemic type (`DECISION`, …).
    pub memory_type: String,
    /// Text.
    pub text: String,
    /// Valid from.
    pub t_valid: Option<i64>,
    /// Valid until.
    pub t_invalid: Option<i64>,
    /// Current, superseded, open or answered.
    pub standing: Option<String>,
    /// The graph's content hash of the node.
    pub version: Option<String>,
}

/// Any node, with its labels and properties.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct NodeView {
    /// Node id.
    pub id: String,
    /// Labels besides `Node`.
    pub labels: Vec<String>,
    /// Properties (hashes omitted).
    #[schema(value_type = Object)]
    pub properties: BTreeMap<String, serde_json::Value>,
}

/// A relationship between two nodes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct EdgeView {
    /// Relationship type.
    #[serde(rename = "type")]
    pub rel_type: String,
    /// Start node id.
    pub from: String,
    /// End node id.
    pub to: String,
    /// Properties (hashes omitted).
    #[schema(value_type = Object)]
    pub properties: BTreeMap<String, serde_json::Value>,
}

/// Nodes and the relationships between them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Subgraph {
    /// Nodes, by id order.
    pub nodes: Vec<NodeView>,
    /// Relationships.
    pub edges: Vec<EdgeView>,
}
