//! The records of the dataflow and their stable ids.

use std::fmt;

pub use epigraph_schemas::memory::{EpistemicType, Standing};
use epigraph_schemas::{Party, SourceEvent, SourceKind};
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
    /// Who wrote it.
    pub authors: Vec<Party>,
    /// Recipients, attendees, channel members.
    pub participants: Vec<Party>,
    /// Conversation or thread id.
    pub thread_id: Option<String>,
    /// Authority level named by the event's `authority` extra, overriding the kind's level.
    pub authority: Option<String>,
    /// Recorded time: when epigraph learned this version (the event's `ingested_at`, ms since
    /// the Unix epoch). Everything extracted from the version carries it.
    pub recorded_at: Option<i64>,
    /// When parts of the body were written, for an item revised over time whose connector knows
    /// its history (a document's revisions): a statement inside a span is valid from the span's
    /// time, not from this version's `occurred_at`. From the event's `written` extra.
    #[serde(default)]
    pub written: Vec<WrittenSpan>,
    /// What a note written through an applied proposal declares of itself (its type, its links,
    /// who proposed it); `None` for everything a source connector publishes.
    #[serde(default)]
    pub note: Option<Note>,
}

/// What a note (the source of an applied `remember` proposal, `extras.via = "proposal"`)
/// declares: its memory objects take the declared type, carry the proposer as their extractor,
/// and assert the declared links.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Note {
    /// The declared epistemic type.
    pub memory_type: EpistemicType,
    /// `(relation, memory object id)`: links from the note's statements.
    pub links: Vec<(String, String)>,
    /// Who proposed it (`agent:<name>` or `person:<name>`).
    pub proposer: String,
    /// The proposal that applied it.
    pub proposal: String,
}

impl Note {
    /// The note an event declares, if it is one: `extras.via = "proposal"` with a valid
    /// `memory_type`, `links` (JSON `[{"relation": …, "to": …}]`), `proposer` and `proposal`.
    ///
    /// ```
    /// use epigraph_operators::model::Note;
    /// use epigraph_schemas::{SourceEvent, SourceKind};
    /// let mut event = SourceEvent::upsert("acme", SourceKind::Document, "note/p1", None, "We ship.".into(), 0);
    /// assert!(Note::of(&event).is_none());
    /// for (k, v) in [("via", "proposal"), ("memory_type", "DECISION"), ("proposer", "agent:scout"),
    ///     ("proposal", "p1"), ("links", r#"[{"relation": "SUPERSEDES", "to": "m9"}]"#)] {
    ///     event.extras.insert(k.into(), v.into());
    /// }
    /// let note = Note::of(&event).unwrap();
    /// assert_eq!(note.links, [("SUPERSEDES".to_string(), "m9".to_string())]);
    /// ```
    pub fn of(event: &SourceEvent) -> Option<Note> {
        if event.extras.get("via").map(String::as_str) != Some("proposal") {
            return None;
        }
        let memory_type = parse_type(event.extras.get("memory_type")?)?;
        let links = event
            .extras
            .get("links")
            .and_then(|l| {
                serde_json::from_str::<Vec<epigraph_schemas::proposals::NoteLink>>(l).ok()
            })
            .unwrap_or_default()
            .into_iter()
            .map(|l| (l.relation.rel_type().to_string(), l.to))
            .collect();
        Some(Note {
            memory_type,
            links,
            proposer: event.extras.get("proposer").cloned().unwrap_or_default(),
            proposal: event.extras.get("proposal").cloned().unwrap_or_default(),
        })
    }
}

/// A part of a body and when it was written: characters `start..end` at `at` (ms since the
/// Unix epoch).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct WrittenSpan {
    /// First character.
    pub start: u32,
    /// After the last character.
    pub end: u32,
    /// When it was written.
    pub at: i64,
}

impl WrittenSpan {
    /// Reads the `written` extra of an event: `start-end@ms` spans separated by `;`, in
    /// characters of the body. Malformed spans are skipped.
    ///
    /// ```
    /// use epigraph_operators::model::WrittenSpan;
    /// let spans = WrittenSpan::parse("0-52@1772938395597; 53-120@1781506046150;junk");
    /// assert_eq!(spans.len(), 2);
    /// assert_eq!((spans[1].start, spans[1].end, spans[1].at), (53, 120, 1_781_506_046_150));
    /// assert_eq!(WrittenSpan::render(&spans), "0-52@1772938395597;53-120@1781506046150");
    /// ```
    pub fn parse(text: &str) -> Vec<WrittenSpan> {
        text.split(';')
            .filter_map(|item| {
                let (range, at) = item.trim().split_once('@')?;
                let (start, end) = range.split_once('-')?;
                let span = WrittenSpan {
                    start: start.trim().parse().ok()?,
                    end: end.trim().parse().ok()?,
                    at: at.trim().parse().ok()?,
                };
                (span.start < span.end).then_some(span)
            })
            .collect()
    }

    /// The `written` extra for these spans.
    pub fn render(spans: &[WrittenSpan]) -> String {
        spans
            .iter()
            .map(|s| format!("{}-{}@{}", s.start, s.end, s.at))
            .collect::<Vec<_>>()
            .join(";")
    }
}

impl SourceVersion {
    /// When the character at `at` was written: its span's time, else the version's
    /// `occurred_at`.
    ///
    /// ```
    /// use epigraph_operators::{SourceVersion, model::WrittenSpan};
    /// use epigraph_schemas::SourceKind;
    /// let mut doc = SourceVersion::new("t", "d", SourceKind::Document, "Old line. New line.");
    /// doc.occurred_at = Some(200);
    /// doc.written = vec![WrittenSpan { start: 0, end: 9, at: 100 }];
    /// assert_eq!((doc.written_at(3), doc.written_at(12)), (Some(100), Some(200)));
    /// ```
    pub fn written_at(&self, at: u32) -> Option<i64> {
        self.written
            .iter()
            .find(|s| s.start <= at && at < s.end)
            .map(|s| s.at)
            .or(self.occurred_at)
    }

    /// A version with only the fields most tests need; the rest empty.
    ///
    /// ```
    /// use epigraph_operators::SourceVersion;
    /// use epigraph_schemas::SourceKind;
    /// let doc = SourceVersion::new("acme", "a.md", SourceKind::Document, "We ship in June.");
    /// assert_eq!(doc.version.len(), 32);
    /// assert!(doc.authors.is_empty());
    /// ```
    pub fn new(tenant: &str, source_id: &str, kind: SourceKind, body: &str) -> Self {
        SourceVersion {
            tenant: tenant.to_string(),
            source_id: source_id.to_string(),
            kind,
            version: stable_id(&[body]),
            title: None,
            body: body.to_string(),
            occurred_at: None,
            authors: Vec::new(),
            participants: Vec::new(),
            thread_id: None,
            authority: None,
            recorded_at: None,
            written: Vec::new(),
            note: None,
        }
    }

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
            authors: event.authors.clone(),
            participants: event.participants.clone(),
            thread_id: event.thread_id.clone(),
            authority: event.extras.get("authority").cloned(),
            recorded_at: Some(event.ingested_at),
            written: event
                .extras
                .get("written")
                .map(|w| WrittenSpan::parse(w))
                .unwrap_or_default(),
            note: Note::of(event),
        }
    }

    /// The id of the source node: stable across versions of the same item.
    pub fn node_id(&self) -> String {
        stable_id(&["source", &self.tenant, &self.source_id])
    }
}

/// What a unit of text is: what the segmenter finds (`extract::segment`) and the learned typer
/// reads (`ontology::typer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnitForm {
    /// A `Key: value` line of the header block.
    Header,
    /// An item of a list (or a sentence inside one).
    ListItem,
    /// A sentence of a paragraph.
    Sentence,
}

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
    /// Recorded time of the live version (ms since the Unix epoch).
    pub recorded_at: Option<i64>,
}

/// Whether a statement reports a fact, voices an opinion or predicts (Mind Graph).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum StatementType {
    /// Reported as true.
    Fact,
    /// A judgement or preference.
    Opinion,
    /// About the future.
    Prediction,
}

impl StatementType {
    /// Lower-case name, e.g. `fact`.
    pub fn as_str(self) -> &'static str {
        match self {
            StatementType::Fact => "fact",
            StatementType::Opinion => "opinion",
            StatementType::Prediction => "prediction",
        }
    }
}

/// How a statement behaves in time (Mind Graph): only dynamic facts are invalidated by newer
/// ones; static and atemporal facts never are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TemporalType {
    /// True once and stays true ("Atlas was founded in 2019").
    Static,
    /// Can change ("Atlas launches on June 3").
    Dynamic,
    /// Not about time at all (definitions, rules).
    Atemporal,
}

impl TemporalType {
    /// Lower-case name, e.g. `dynamic`.
    pub fn as_str(self) -> &'static str {
        match self {
            TemporalType::Static => "static",
            TemporalType::Dynamic => "dynamic",
            TemporalType::Atemporal => "atemporal",
        }
    }
}

/// Where an extracted element came from.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Provenance {
    /// Id of the source item.
    pub source_id: String,
    /// Version (content hash) of the source item.
    pub source_version: String,
    /// Character span `[start, end)` in the source body.
    pub span: (u32, u32),
    /// Name and version of the extractor.
    pub extractor: String,
    /// Confidence in thousandths: source authority x cue strength.
    pub confidence: u16,
}

/// A typed memory object extracted from a source, with its provenance.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct MemoryObject {
    /// Stable id: tenant, source id, the normalised text and its occurrence number, so that an
    /// edit elsewhere in the source keeps the id.
    pub id: String,
    /// Tenant.
    pub tenant: String,
    /// Epistemic type.
    pub memory_type: EpistemicType,
    /// Fact, opinion or prediction.
    pub statement_type: StatementType,
    /// Static, dynamic or atemporal.
    pub temporal_type: TemporalType,
    /// The text of the object (whitespace collapsed).
    pub text: String,
    /// Title of the source it came from.
    pub title: Option<String>,
    /// Heading of the section it sits under, if any.
    pub section: Option<String>,
    /// Headings of every section it sits under, outermost first (the last is `section`):
    /// "Removals", "Classes and methods". (Always written, like `header`.)
    #[serde(default)]
    pub outline: Vec<String>,
    /// Id of the source item (provenance).
    pub source_id: String,
    /// Version of the source item it came from (provenance).
    pub source_version: String,
    /// Character span `[start, end)` in the source body (provenance).
    pub span: (u32, u32),
    /// Name and version of the extractor (provenance).
    pub extractor: String,
    /// Confidence in thousandths: source authority x cue strength.
    pub confidence: u16,
    /// When it became valid (ms since the Unix epoch), if known.
    pub t_valid: Option<i64>,
    /// When it stopped being valid: superseded, or (questions) answered.
    pub t_invalid: Option<i64>,
    /// Current, superseded, open or answered.
    pub standing: Standing,
    /// Recorded time of the source version it came from.
    pub recorded_at: Option<i64>,
    /// Whether it is a field of its document's header block (`Status: Accepted` under the
    /// title, as the segmenter found it): a fact about the document, not a statement in it.
    /// (Always written: timely exchanges memory objects as bincode, which cannot skip a field.)
    #[serde(default)]
    pub header: bool,
}

/// An entity of the organisation: a person, project, organisation, … (kinds come from the
/// ontology). One node per tenant, kind and normalised name, aggregated over every source that
/// mentions it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct EntityNode {
    /// Stable id: tenant, kind and key (normalised name, or address for a nameless person).
    pub id: String,
    /// Tenant.
    pub tenant: String,
    /// Kind from the ontology, e.g. `Person`.
    pub kind: String,
    /// Display name: the most frequent surface form (ties: the smallest).
    pub name: String,
    /// Every surface form seen, sorted.
    pub aliases: Vec<String>,
    /// Every address seen (e-mail, chat id), sorted.
    pub addresses: Vec<String>,
    /// Number of sightings (mentions, headers, attendees).
    pub mentions: u32,
    /// Number of distinct sources it was seen in.
    pub sources: u32,
    /// Valid from: the earliest time a source that names it was written.
    pub t_valid: Option<i64>,
    /// Recorded time: the earliest recorded time of those sources.
    pub recorded_at: Option<i64>,
}

/// A structured claim: (subject, attribute, value, unit, qualifier, valid time), the material of
/// supersession and contradiction.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Claim {
    /// Stable id: memory object, attribute and value position.
    pub id: String,
    /// Tenant.
    pub tenant: String,
    /// Memory object that asserts it.
    pub memory_id: String,
    /// Subject key: an entity id, or `title:<normalised title>` when no entity is named.
    pub subject: String,
    /// Subject as written.
    pub subject_name: String,
    /// Attribute from the ontology, e.g. `launch_date`, or the value kind (`amount`, …).
    pub attribute: String,
    /// Normalised value: a number without separators, an ISO date, a status word, a name.
    pub value: String,
    /// Unit: a currency (`EUR`), `%`, `date`, `count`, `status`, `person`.
    pub unit: String,
    /// Qualifier such as `at least`, `about`, `up to`, `not`.
    pub qualifier: Option<String>,
    /// Static, dynamic or atemporal (from the asserting memory object): only dynamic claims are
    /// superseded by newer ones.
    pub temporal_type: TemporalType,
    /// Valid from (ms since the Unix epoch): when the source was written.
    pub t_valid: Option<i64>,
    /// Valid until: when a newer claim on the same subject and attribute replaced it.
    pub t_invalid: Option<i64>,
    /// Current or superseded.
    pub standing: Standing,
    /// Recorded time of the source version it came from.
    pub recorded_at: Option<i64>,
    /// Where it was read.
    pub provenance: Provenance,
}

/// A typed, directed edge between two nodes.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Relation {
    /// Stable id: type and both endpoints.
    pub id: String,
    /// Tenant.
    pub tenant: String,
    /// Relationship type in Neo4j, e.g. `DERIVED_FROM`, `WORKS_ON`.
    pub rel_type: String,
    /// Id of the start node.
    pub from: String,
    /// Id of the end node.
    pub to: String,
    /// Where it was read (for entity relations: the earliest source that states it).
    pub provenance: Option<Provenance>,
    /// Temporal type of the fact, for relations from the vocabulary.
    pub temporal_type: Option<TemporalType>,
    /// When it became valid (ms since the Unix epoch), if known.
    pub t_valid: Option<i64>,
    /// When it stopped being valid, if it did.
    pub t_invalid: Option<i64>,
    /// Recorded time: when epigraph learned it (the later of its sources' recorded times).
    pub recorded_at: Option<i64>,
    /// Number of distinct sources stating it.
    pub support: u32,
    /// `"confirmed"` when a reviewer confirmed this judgement (see
    /// [`crate::epistemic::review`]); absent otherwise. (Always serialized: timely exchanges
    /// elements between processes in a format that is not self-describing, where a skipped
    /// field misaligns everything after it.)
    #[serde(default)]
    pub review: Option<String>,
    /// Why the relation holds, when a rule can say it in words: on `SAME_AS`, the identity
    /// evidence that links the member into its component ("same address maya@x — m. chen"); on
    /// an edge a citation drew (`BASED_ON`, `REFINES`, `SUPERSEDES`, … between statements of two
    /// documents), the cue that drew it ("cue \"builds on\" naming kep 753"). Empty on every
    /// other relation. (Always serialized, like `review`.)
    #[serde(default)]
    pub evidence: Vec<String>,
}

impl Relation {
    /// A structural edge (`DERIVED_FROM`, `MENTIONS`, …) with a stable id from its type and
    /// endpoints.
    ///
    /// ```
    /// use epigraph_operators::Relation;
    /// let edge = Relation::structural("t", "DERIVED_FROM", "m", "s", None);
    /// assert_eq!(edge.id, Relation::structural("t", "DERIVED_FROM", "m", "s", None).id);
    /// assert_eq!(edge.support, 1);
    /// ```
    pub fn structural(
        tenant: &str,
        rel_type: &str,
        from: &str,
        to: &str,
        provenance: Option<Provenance>,
    ) -> Self {
        Relation {
            id: stable_id(&[rel_type, from, to]),
            tenant: tenant.to_string(),
            rel_type: rel_type.to_string(),
            from: from.to_string(),
            to: to.to_string(),
            provenance,
            temporal_type: None,
            t_valid: None,
            t_invalid: None,
            recorded_at: None,
            support: 1,
            review: None,
            evidence: Vec::new(),
        }
    }
}

/// A node's priority and the terms it is made of, at the fixed point (all in millionths).
///
/// When K* is not clamped, η·k = η·(s + h + u + e + g) − c − decay, up to rounding.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Priority {
    /// K*, rounded down: the lower end of the bracket. In [0, 1]; rank by this.
    pub k: Fixed,
    /// The upper end of the bracket: the fixed point lies in [k, k_upper].
    pub k_upper: Fixed,
    /// Type prior.
    pub s: Fixed,
    /// Open-question urgency.
    pub h: Fixed,
    /// Usage activation.
    pub u: Fixed,
    /// Evidence activation.
    pub e: Fixed,
    /// Graph influence (at k).
    pub g: Fixed,
    /// Contradiction and demotion penalty.
    pub c: Fixed,
    /// Δt, days.
    pub dt: Fixed,
    /// The decay force λ·Δt·k (negative while an open question grows).
    pub decay: Fixed,
    /// K* before the clamps: `(η·(s+h+u+e+g) − c) / (η + λ·Δt)` at this `g`, with K not held to
    /// [0, 1] and an open question's urgency h not held to 1. Equal to `k` inside (0, 1) (the
    /// same fixed point); at a bound it tells saturated nodes apart — a decision with support
    /// stands further above 1 than a bare one, a question open for a year further than one open
    /// for a month — so it breaks ties among equal `k` (and among nodes pressed to 0).
    pub unclamped: Fixed,
}

impl Priority {
    /// K* as a float.
    ///
    /// ```
    /// use epigraph_operators::priority::{Fixed, Priority};
    /// let p = Priority { k: Fixed(347_826), ..Priority::default() };
    /// assert_eq!(p.k_f64(), 0.347826);
    /// ```
    pub fn k_f64(&self) -> f64 {
        self.k.to_f64()
    }
}

/// A fixed-point number in millionths: `Fixed(347_826)` is 0.347826.
///
/// ```
/// use epigraph_operators::priority::Fixed;
/// assert_eq!(Fixed::from_f64(0.3478261), Fixed(347_826));
/// assert_eq!(Fixed::ONE.to_f64(), 1.0);
/// assert_eq!(Fixed(-10_000).to_string(), "-0.010000");
/// ```
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Fixed(pub i64);

/// Units per 1.0.
pub const SCALE: i64 = 1_000_000;

impl Fixed {
    /// 0.0
    pub const ZERO: Fixed = Fixed(0);
    /// 1.0
    pub const ONE: Fixed = Fixed(SCALE);

    /// The nearest fixed-point number (halves away from zero). Used for configuration only.
    pub fn from_f64(x: f64) -> Fixed {
        Fixed((x * SCALE as f64).round() as i64)
    }

    /// The value as a float, for display and for callers that rank with floats.
    pub fn to_f64(self) -> f64 {
        self.0 as f64 / SCALE as f64
    }
}

impl fmt::Display for Fixed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        let scale = SCALE as u64;
        write!(f, "{sign}{}.{:06}", abs / scale, abs % scale)
    }
}

/// The priority K of a memory node and the terms it is made of (see [`crate::priority`]): written
/// as properties of the node, not as a node of its own.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct NodePriority {
    /// `priority:<node id>`: distinct from the node's own id, so the two change independently.
    pub id: String,
    /// The memory node.
    pub node: String,
    /// Tenant.
    pub tenant: String,
    /// K* and its terms.
    pub priority: Priority,
}

impl NodePriority {
    /// The priority of `node`.
    pub fn new(tenant: &str, node: &str, priority: Priority) -> Self {
        NodePriority {
            id: format!("priority:{node}"),
            node: node.to_string(),
            tenant: tenant.to_string(),
            priority,
        }
    }
}

/// Everything the dataflow emits to the sinks.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum GraphElement {
    /// A source node.
    Source(SourceNode),
    /// A memory object.
    Memory(MemoryObject),
    /// An entity.
    Entity(EntityNode),
    /// A claim.
    Claim(Claim),
    /// An edge.
    Relation(Relation),
    /// A memory node's priority.
    Priority(NodePriority),
}

impl GraphElement {
    /// Hash of the element's whole content: sinks skip rewriting an element whose hash they
    /// already hold.
    ///
    /// ```
    /// use epigraph_operators::{GraphElement, Relation};
    /// let edge = |to: &str| GraphElement::Relation(Relation::structural("t", "X", "a", to, None));
    /// assert_eq!(edge("b").content_hash(), edge("b").content_hash());
    /// assert_ne!(edge("b").content_hash(), edge("c").content_hash());
    /// ```
    pub fn content_hash(&self) -> String {
        let bytes = serde_json::to_vec(self).expect("graph elements serialize");
        hex::encode(&Sha256::digest(&bytes)[..16])
    }

    /// The tenant it belongs to.
    ///
    /// ```
    /// use epigraph_operators::{GraphElement, Relation};
    /// let edge = GraphElement::Relation(Relation::structural("acme", "X", "a", "b", None));
    /// assert_eq!(edge.tenant(), "acme");
    /// ```
    pub fn tenant(&self) -> &str {
        match self {
            GraphElement::Source(s) => &s.tenant,
            GraphElement::Memory(m) => &m.tenant,
            GraphElement::Entity(e) => &e.tenant,
            GraphElement::Claim(c) => &c.tenant,
            GraphElement::Relation(r) => &r.tenant,
            GraphElement::Priority(p) => &p.tenant,
        }
    }

    /// The element's stable id.
    pub fn id(&self) -> &str {
        match self {
            GraphElement::Source(s) => &s.id,
            GraphElement::Memory(m) => &m.id,
            GraphElement::Entity(e) => &e.id,
            GraphElement::Claim(c) => &c.id,
            GraphElement::Relation(r) => &r.id,
            GraphElement::Priority(p) => &p.id,
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
