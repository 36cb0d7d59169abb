//! The records of the dataflow and their stable ids.

use epigraph_schemas::{SourceEvent, SourceKind};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// One live version of one source item: the input of the dataflow.
///
/// The runtime keeps at most one version per `(tenant, source_id)` in the input collection: a new
/// version retracts the previous one, a tombstone retracts it without replacement.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SourceVersion {
    /// Tenant the item belongs to.
    pub tenant: String,
    /// Stable id of the item inside its tenant.
    pub source_id: String,
    /// Connector family.
    pub kind: SourceKind,
    /// Content hash of this version.
    pub version: String,
    /// Title, subject or summary.
    pub title: Option<String>,
    /// Normalised plain text.
    pub body: String,
    /// When it was written at its source (ms since the Unix epoch).
    pub occurred_at: Option<i64>,
}

impl SourceVersion {
    /// The live version carried by an upsert event.
    pub fn from_event(event: &SourceEvent) -> Self {
        SourceVersion {
            tenant: event.tenant.clone(),
            source_id: event.source_id.clone(),
            kind: event.source_kind,
            version: event.version.clone(),
            title: event.title.clone(),
            body: event.body.clone(),
            occurred_at: event.occurred_at,
        }
    }

    /// The id of the source node: stable across versions of the same item.
    pub fn node_id(&self) -> String {
        stable_id(&["source", &self.tenant, &self.source_id])
    }
}

/// The nine epistemic types of memory objects (OIDA Table 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum EpistemicType {
    /// A choice the organisation made.
    Decision,
    /// A rule or limit that must hold.
    Constraint,
    /// A fact or measurement offered in support of something.
    Evidence,
    /// A story or description without a stronger type.
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
    /// use epigraph_operators::EpistemicType;
    /// assert_eq!(EpistemicType::Question.name(), "QUESTION");
    /// ```
    pub fn name(self) -> String {
        self.label().to_ascii_uppercase()
    }
}

/// The node of a source item in the graph.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SourceNode {
    /// Stable id ([`SourceVersion::node_id`]).
    pub id: String,
    /// Tenant.
    pub tenant: String,
    /// Id of the item at its source.
    pub source_id: String,
    /// Connector family.
    pub kind: SourceKind,
    /// Content hash of the live version.
    pub version: String,
    /// Title, if any.
    pub title: Option<String>,
    /// When it was written (ms since the Unix epoch).
    pub occurred_at: Option<i64>,
}

/// A typed memory object extracted from a source, with its provenance.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct MemoryObject {
    /// Stable id: tenant, source id and character span.
    pub id: String,
    /// Tenant.
    pub tenant: String,
    /// Epistemic type.
    pub memory_type: EpistemicType,
    /// The text of the object.
    pub text: String,
    /// Title of the source it came from.
    pub title: Option<String>,
    /// Id of the source item (provenance).
    pub source_id: String,
    /// Version of the source item it came from (provenance).
    pub source_version: String,
    /// Character span `[start, end)` in the source body (provenance).
    pub span: (u32, u32),
    /// Name and version of the extractor (provenance).
    pub extractor: String,
    /// When it became valid (ms since the Unix epoch), if known.
    pub t_valid: Option<i64>,
}

/// A typed, directed edge between two nodes.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Relation {
    /// Stable id: type and both endpoints.
    pub id: String,
    /// Tenant.
    pub tenant: String,
    /// Relationship type in Neo4j, e.g. `DERIVED_FROM`.
    pub rel_type: String,
    /// Id of the start node.
    pub from: String,
    /// Id of the end node.
    pub to: String,
}

/// Everything the dataflow emits to the sinks.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum GraphElement {
    /// A source node.
    Source(SourceNode),
    /// A memory object.
    Memory(MemoryObject),
    /// An edge.
    Relation(Relation),
}

impl GraphElement {
    /// Hash of the element's whole content: sinks skip rewriting an element whose hash they
    /// already hold.
    ///
    /// ```
    /// use epigraph_operators::{GraphElement, Relation};
    /// let edge = |to: &str| GraphElement::Relation(Relation { id: "e".into(), tenant: "t".into(),
    ///     rel_type: "X".into(), from: "a".into(), to: to.into() });
    /// assert_eq!(edge("b").content_hash(), edge("b").content_hash());
    /// assert_ne!(edge("b").content_hash(), edge("c").content_hash());
    /// ```
    pub fn content_hash(&self) -> String {
        let bytes = serde_json::to_vec(self).expect("graph elements serialize");
        hex::encode(&Sha256::digest(&bytes)[..16])
    }

    /// The element's stable id.
    pub fn id(&self) -> &str {
        match self {
            GraphElement::Source(s) => &s.id,
            GraphElement::Memory(m) => &m.id,
            GraphElement::Relation(r) => &r.id,
        }
    }
}

/// A stable, readable id: the hex of the first 16 bytes of sha256 over the parts.
///
/// ```
/// use epigraph_operators::stable_id;
/// assert_eq!(stable_id(&["a", "b"]), stable_id(&["a", "b"]));
/// assert_ne!(stable_id(&["ab", ""]), stable_id(&["a", "b"]));
/// assert_eq!(stable_id(&["x"]).len(), 32);
/// ```
pub fn stable_id(parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hex::encode(&hasher.finalize()[..16])
}
