//! The per-kind records of [`SourceEvent`](crate::SourceEvent): what a chat message, an e-mail,
//! a calendar event and a document carry besides the envelope (`avsc/chat_message.avsc`,
//! `email_message.avsc`, `calendar_event.avsc`, `document_file.avsc`).
//!
//! Connectors write source-specific fields as `extras`; [`SourceEvent::fill_record`] derives the
//! kind's typed record from them just before publishing, so every producer (connectors, the
//! webhook, `ingest events`) emits the same contract.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{SourceEvent, SourceKind};

/// `chat_message.avsc`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Channel, group or conversation name.
    pub channel: String,
    /// public, private, mpim or im.
    pub channel_kind: Option<String>,
    /// The platform's channel id.
    pub channel_id: Option<String>,
    /// The platform's message timestamp.
    pub ts: String,
    /// The author's platform user id.
    pub user_id: Option<String>,
    /// Message subtype; none for a plain message.
    pub subtype: Option<String>,
    /// When it was last edited (ms).
    pub edited_at: Option<i64>,
    /// Who edited it.
    pub edited_by: Option<String>,
    /// Names mentioned with @.
    #[serde(default)]
    pub mentions: Vec<String>,
}

/// `email_message.avsc`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmailMessage {
    /// Message-ID.
    pub message_id: Option<String>,
    /// In-Reply-To.
    pub in_reply_to: Option<String>,
    /// References, oldest first.
    #[serde(default)]
    pub references: Vec<String>,
    /// Charset of the body as sent.
    pub charset: Option<String>,
    /// The mbox file or maildir it was read from.
    pub mailbox: Option<String>,
    /// Quoted replies cut from the body.
    pub quoted_text: Option<String>,
    /// Signature cut from the body.
    pub signature: Option<String>,
}

/// An attendee of `calendar_event.avsc`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attendee {
    /// CN.
    pub name: Option<String>,
    /// mailto address.
    pub address: String,
    /// PARTSTAT.
    pub partstat: Option<String>,
    /// ROLE.
    pub role: Option<String>,
    /// RSVP.
    pub rsvp: Option<String>,
}

/// `calendar_event.avsc`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CalendarEvent {
    /// UID of the series.
    pub uid: String,
    /// End of the occurrence (ms).
    pub end: Option<i64>,
    /// A date without a time.
    #[serde(default)]
    pub all_day: bool,
    /// LOCATION.
    pub location: Option<String>,
    /// STATUS.
    pub status: Option<String>,
    /// SEQUENCE.
    pub sequence: Option<i64>,
    /// RRULE as written.
    pub rrule: Option<String>,
    /// Start of this occurrence in the series.
    pub recurrence_id: Option<String>,
    /// The calendar's METHOD.
    pub method: Option<String>,
    /// Attendees.
    #[serde(default)]
    pub attendees: Vec<Attendee>,
}

/// `document_file.avsc`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentFile {
    /// Path relative to the ingested folder.
    pub path: String,
    /// md, txt, html …
    pub format: Option<String>,
}

fn get(extras: &BTreeMap<String, String>, key: &str) -> Option<String> {
    extras.get(key).filter(|v| !v.is_empty()).cloned()
}

impl SourceEvent {
    /// Derives the kind's typed record from the extras, unless the producer set one (a tombstone
    /// gets none).
    ///
    /// ```
    /// use epigraph_schemas::{SourceEvent, SourceKind};
    /// let mut event = SourceEvent::upsert("t", SourceKind::Chat, "slack/general/1.0", None, "hi".into(), 0);
    /// event.extras.insert("channel".into(), "general".into());
    /// event.extras.insert("ts".into(), "1.0".into());
    /// event.extras.insert("mentions".into(), "Ada,Bob".into());
    /// event.fill_record();
    /// let chat = event.chat.unwrap();
    /// assert_eq!((chat.channel.as_str(), chat.mentions.len()), ("general", 2));
    /// ```
    pub fn fill_record(&mut self) {
        let has_record = self.chat.is_some()
            || self.email.is_some()
            || self.calendar.is_some()
            || self.document.is_some();
        if self.op == crate::Op::Delete || has_record {
            return;
        }
        let x = &self.extras;
        match self.source_kind {
            SourceKind::Chat => {
                self.chat = Some(ChatMessage {
                    channel: get(x, "channel").unwrap_or_default(),
                    channel_kind: get(x, "channel_type"),
                    channel_id: get(x, "channel_id"),
                    ts: get(x, "ts").unwrap_or_default(),
                    user_id: get(x, "user"),
                    subtype: get(x, "subtype"),
                    edited_at: get(x, "edited_at").and_then(|v| v.parse().ok()),
                    edited_by: get(x, "edited_by"),
                    mentions: get(x, "mentions")
                        .map(|m| m.split(',').map(str::to_string).collect())
                        .unwrap_or_default(),
                })
            }
            SourceKind::Email => {
                self.email = Some(EmailMessage {
                    message_id: get(x, "message_id"),
                    in_reply_to: get(x, "in_reply_to"),
                    references: get(x, "references")
                        .map(|r| r.split_whitespace().map(str::to_string).collect())
                        .unwrap_or_default(),
                    charset: get(x, "charset"),
                    mailbox: get(x, "mailbox"),
                    quoted_text: get(x, "quoted_text"),
                    signature: get(x, "signature"),
                })
            }
            SourceKind::Calendar => {
                let attendees: Vec<Attendee> = get(x, "attendees")
                    .and_then(|a| serde_json::from_str(&a).ok())
                    .unwrap_or_default();
                self.calendar = Some(CalendarEvent {
                    uid: get(x, "uid").unwrap_or_else(|| self.source_id.clone()),
                    end: get(x, "dtend").and_then(|v| v.parse().ok()),
                    all_day: get(x, "all_day").is_some_and(|v| v == "true"),
                    location: get(x, "location"),
                    status: get(x, "status"),
                    sequence: get(x, "sequence").and_then(|v| v.parse().ok()),
                    rrule: get(x, "rrule"),
                    recurrence_id: get(x, "recurrence_id"),
                    method: get(x, "method"),
                    attendees,
                })
            }
            SourceKind::Document => {
                self.document = Some(DocumentFile {
                    path: get(x, "path").unwrap_or_else(|| self.source_id.clone()),
                    format: get(x, "format"),
                })
            }
        }
    }
}
