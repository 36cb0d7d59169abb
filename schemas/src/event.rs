//! Rust mirror of `avsc/source_event.avsc`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Which family of connector produced an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SourceKind {
    /// A chat message (Slack export, webhook).
    Chat,
    /// An e-mail (mbox, .eml, maildir).
    Email,
    /// A calendar event occurrence (.ics).
    Calendar,
    /// A document (Markdown, text, HTML, BEIR corpus line).
    Document,
}

impl SourceKind {
    /// Lower-case name used in topic names and labels.
    ///
    /// ```
    /// assert_eq!(epigraph_schemas::SourceKind::Document.as_str(), "document");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Chat => "chat",
            SourceKind::Email => "email",
            SourceKind::Calendar => "calendar",
            SourceKind::Document => "document",
        }
    }

    /// The kind named `name` (`chat`, `email`, `calendar`, `document`; case-insensitive).
    ///
    /// ```
    /// use epigraph_schemas::SourceKind;
    /// assert_eq!(SourceKind::parse("Email"), Some(SourceKind::Email));
    /// assert_eq!(SourceKind::parse("fax"), None);
    /// ```
    pub fn parse(name: &str) -> Option<SourceKind> {
        SourceKind::ALL
            .into_iter()
            .find(|k| k.as_str().eq_ignore_ascii_case(name))
    }

    /// Every kind, in schema order.
    pub const ALL: [SourceKind; 4] = [
        SourceKind::Chat,
        SourceKind::Email,
        SourceKind::Calendar,
        SourceKind::Document,
    ];
}

/// Whether an event publishes a version or removes the item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Op {
    /// A new (or re-sent) version of the item.
    Upsert,
    /// The item was removed at its source: the tombstone.
    Delete,
}

/// A person or account named by an item: an author, a recipient, an attendee.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Party {
    /// Display name as written at the source.
    pub name: Option<String>,
    /// E-mail address or chat user id.
    pub address: Option<String>,
}

/// A link, attachment (metadata only) or reference carried by an item.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Link {
    /// What the link is: `attachment`, `reply_to`, `reference`, `url`, `file`.
    pub rel: String,
    /// URL, message id, file name or source id it points to.
    pub target: String,
    /// MIME type of an attachment.
    pub media_type: Option<String>,
    /// Size of an attachment in bytes.
    pub size_bytes: Option<i64>,
}

/// One version of one source item; see `avsc/source_event.avsc` for the field documentation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceEvent {
    /// Unique id of this publication.
    pub event_id: String,
    /// Tenant (organisation) the item belongs to.
    pub tenant: String,
    /// Connector family.
    pub source_kind: SourceKind,
    /// Stable id of the item inside its tenant.
    pub source_id: String,
    /// Content hash of the normalised item.
    pub version: String,
    /// Upsert or tombstone.
    pub op: Op,
    /// When the item was written at its source, ms since the Unix epoch.
    pub occurred_at: Option<i64>,
    /// When the connector read it, ms since the Unix epoch.
    pub ingested_at: i64,
    /// Who wrote it.
    #[serde(default)]
    pub authors: Vec<Party>,
    /// Recipients, attendees, channel members.
    #[serde(default)]
    pub participants: Vec<Party>,
    /// Conversation or thread id.
    pub thread_id: Option<String>,
    /// Subject, summary or title.
    pub title: Option<String>,
    /// Normalised plain text.
    #[serde(default)]
    pub body: String,
    /// Links and attachments.
    #[serde(default)]
    pub links: Vec<Link>,
    /// Source-specific fields.
    #[serde(default)]
    pub extras: BTreeMap<String, String>,
    /// For chat items: the chat record ([`SourceEvent::fill_record`]).
    #[serde(default)]
    pub chat: Option<crate::records::ChatMessage>,
    /// For e-mail items: the e-mail record.
    #[serde(default)]
    pub email: Option<crate::records::EmailMessage>,
    /// For calendar items: the calendar record.
    #[serde(default)]
    pub calendar: Option<crate::records::CalendarEvent>,
    /// For documents: the document record.
    #[serde(default)]
    pub document: Option<crate::records::DocumentFile>,
}

impl SourceEvent {
    /// A new upsert event; `version` is computed from title and body with [`content_version`].
    ///
    /// ```
    /// use epigraph_schemas::{Op, SourceEvent, SourceKind};
    /// let e = SourceEvent::upsert("acme", SourceKind::Document, "notes/a.md", Some("A".into()), "hello".into(), 0);
    /// assert_eq!(e.op, Op::Upsert);
    /// assert_eq!(e.key(), "acme/notes/a.md");
    /// assert_eq!(e.version, epigraph_schemas::event::content_version(Some("A"), "hello"));
    /// ```
    pub fn upsert(
        tenant: &str,
        source_kind: SourceKind,
        source_id: &str,
        title: Option<String>,
        body: String,
        ingested_at: i64,
    ) -> Self {
        let version = content_version(title.as_deref(), &body);
        let event_id = event_id(tenant, source_id, &version, Op::Upsert);
        SourceEvent {
            event_id,
            tenant: tenant.to_string(),
            source_kind,
            source_id: source_id.to_string(),
            version,
            op: Op::Upsert,
            occurred_at: None,
            ingested_at,
            authors: Vec::new(),
            participants: Vec::new(),
            thread_id: None,
            title,
            body,
            links: Vec::new(),
            extras: BTreeMap::new(),
            chat: None,
            email: None,
            calendar: None,
            document: None,
        }
    }

    /// The tombstone of a removed item.
    ///
    /// ```
    /// use epigraph_schemas::{Op, SourceEvent, SourceKind};
    /// let t = SourceEvent::tombstone("acme", SourceKind::Document, "notes/a.md", 0);
    /// assert_eq!((t.op, t.body.as_str()), (Op::Delete, ""));
    /// ```
    pub fn tombstone(
        tenant: &str,
        source_kind: SourceKind,
        source_id: &str,
        ingested_at: i64,
    ) -> Self {
        let mut event = Self::upsert(
            tenant,
            source_kind,
            source_id,
            None,
            String::new(),
            ingested_at,
        );
        event.op = Op::Delete;
        event.version = "deleted".to_string();
        event.event_id = self::event_id(tenant, source_id, &event.version, Op::Delete);
        event
    }

    /// Recompute the version (and event id) over everything the item carries — title, body,
    /// time, people, links and extras — for sources where a change outside the text matters (a
    /// meeting moved to another day, an attendee added).
    ///
    /// ```
    /// use epigraph_schemas::{SourceEvent, SourceKind};
    /// let mut a = SourceEvent::upsert("t", SourceKind::Calendar, "ics/1", None, "Sync".into(), 0);
    /// let mut b = a.clone();
    /// b.occurred_at = Some(86_400_000);
    /// a.reversion();
    /// b.reversion();
    /// assert_ne!(a.version, b.version);
    /// ```
    pub fn reversion(&mut self) {
        let canonical = serde_json::json!({
            "title": self.title,
            "body": self.body,
            "occurred_at": self.occurred_at,
            "authors": self.authors,
            "participants": self.participants,
            "thread_id": self.thread_id,
            "links": self.links,
            "extras": self.extras,
        });
        self.version = hex::encode(Sha256::digest(canonical.to_string().as_bytes()));
        self.event_id = event_id(&self.tenant, &self.source_id, &self.version, self.op);
    }

    /// The Kafka key: `<tenant>/<source_id>`.
    pub fn key(&self) -> String {
        crate::topics::event_key(&self.tenant, &self.source_id)
    }
}

/// Hex sha256 over the title and body: equal content gives an equal version.
pub fn content_version(title: Option<&str>, body: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(title.unwrap_or_default().as_bytes());
    hasher.update([0u8]);
    hasher.update(body.as_bytes());
    hex::encode(hasher.finalize())
}

fn event_id(tenant: &str, source_id: &str, version: &str, op: Op) -> String {
    let mut hasher = Sha256::new();
    for part in [
        tenant,
        source_id,
        version,
        if op == Op::Delete { "d" } else { "u" },
    ] {
        hasher.update(part.as_bytes());
        hasher.update([0u8]);
    }
    hex::encode(&hasher.finalize()[..16])
}
