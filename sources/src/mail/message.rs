//! One message: raw RFC 5322 bytes to the fields of an `EMAIL` event.

use std::panic::{AssertUnwindSafe, catch_unwind};

use epigraph_schemas::{Link, Party, SourceEvent, SourceKind};
use mail_parser::{
    Address, HeaderValue, Message, MessageParser, MessagePart, MimeHeaders, PartType,
};
use sha2::{Digest, Sha256};

use super::MailConfig;
use super::body::split_body;
use crate::error::panic_text;
use crate::formats::{DocumentText, Format, FormatError, attached_document, read_text};
use crate::html::html_to_text;

/// Why a message was not turned into an event; the text is the dead letter's reason.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MailError {
    /// The message is over [`MailConfig::max_message_bytes`].
    #[error("message is {size} bytes, over the {limit} byte limit (mail.max_message_bytes)")]
    TooLarge {
        /// Size of the raw message.
        size: u64,
        /// The configured limit.
        limit: u64,
    },
    /// The bytes do not start with a header block.
    #[error("no headers: the bytes do not start with an RFC 5322 header block")]
    NoHeaders,
    /// Headers were found, but none that an e-mail has.
    #[error("not an e-mail: none of From, To, Date, Subject or Message-ID is present")]
    NotAnEmail,
    /// A multipart body ends before its closing delimiter: the end of the message is missing.
    #[error(
        "truncated message: multipart boundary {boundary:?} is never closed (no \"--{boundary}--\" line), the end of the message is missing"
    )]
    Truncated {
        /// The boundary whose closing delimiter is missing.
        boundary: String,
    },
    /// The MIME parser failed (a bug in the parser, caught so the rest of the mailbox is read).
    #[error("the MIME parser failed on this message: {0}")]
    Parser(String),
}

/// The normalised fields of one message, before it becomes a [`SourceEvent`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedMail {
    /// `mail/<Message-ID without angle brackets>`, or `mail/sha256:<hex of the raw bytes>`.
    pub source_id: String,
    /// Message-ID without angle brackets.
    pub message_id: Option<String>,
    /// Decoded Subject.
    pub subject: Option<String>,
    /// Date header, ms since the Unix epoch.
    pub date: Option<i64>,
    /// From (display name and address).
    pub from: Vec<Party>,
    /// To, Cc and Bcc, in that order, without duplicates.
    pub recipients: Vec<Party>,
    /// The first id of In-Reply-To.
    pub in_reply_to: Option<String>,
    /// The ids of References, oldest first.
    pub references: Vec<String>,
    /// `mail/<id>` of the first reference, else of In-Reply-To, else this message's source id.
    pub thread_id: String,
    /// Plain text (text/plain preferred, else HTML as text), quotes and signature stripped as
    /// configured.
    pub body: String,
    /// Quoted reply removed from the body.
    pub quoted_text: Option<String>,
    /// Signature removed from the body.
    pub signature: Option<String>,
    /// Declared charset of the first body part (`us-ascii` when none is declared).
    pub charset: Option<String>,
    /// One `attachment` link per attachment: file name, media type, decoded size.
    pub attachments: Vec<Link>,
    /// The attachments of a format whose text is read ([`crate::formats`]), with their bytes,
    /// when [`MailConfig::read_attachments`] is on.
    pub readable_attachments: Vec<AttachedFile>,
}

/// An attachment of a readable format, kept to be read into its own event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttachedFile {
    /// Its position among the message's attachments, from 1 (as in its `attachment` link).
    pub index: usize,
    /// The file name (or `attachment-<n>`).
    pub name: String,
    /// The declared media type, lower case.
    pub media_type: Option<String>,
    /// The format it is read as.
    pub format: Format,
    /// The decoded content.
    pub bytes: Vec<u8>,
}

/// What one message yields: its `EMAIL` event, an event per attachment read as text, and the
/// attachments that could not be read.
#[derive(Clone, Debug)]
pub struct MailEvents {
    /// The message.
    pub message: SourceEvent,
    /// One `DOCUMENT` event per readable attachment.
    pub attachments: Vec<SourceEvent>,
    /// Attachments whose text could not be read: the file, and why.
    pub unreadable: Vec<(AttachedFile, FormatError)>,
}

/// Parse one raw message (RFC 5322 with MIME) into its normalised fields; pure and total.
///
/// Encoded words, quoted-printable, base64 and legacy charsets are decoded; a message without
/// Message-ID gets a stable id from the hash of its bytes. Input that is not a whole e-mail is an
/// error that says why, never a panic.
///
/// ```
/// use epigraph_sources::mail::{MailConfig, MailError, parse_message};
/// let raw = b"Message-ID: <a1@example.org>\nFrom: Ann <ann@example.org>\nTo: bob@example.com\n\
///             Subject: =?UTF-8?Q?Caf=C3=A9?=\nDate: Tue, 3 Jun 2025 09:00:00 +0000\n\n\
///             Yes.\n\nOn Monday, Bob wrote:\n> Lunch?\n";
/// let mail = parse_message(raw, &MailConfig::default()).unwrap();
/// assert_eq!(mail.source_id, "mail/a1@example.org");
/// assert_eq!(mail.subject.as_deref(), Some("Café"));
/// assert_eq!(mail.body, "Yes.");
/// assert_eq!(mail.quoted_text.as_deref(), Some("On Monday, Bob wrote:\n> Lunch?"));
/// let event = mail.into_event("acme", "inbox.mbox", 0);
/// assert_eq!(event.key(), "acme/mail/a1@example.org");
/// assert_eq!(event.occurred_at, Some(1_748_941_200_000));
/// assert_eq!(parse_message(b"", &MailConfig::default()), Err(MailError::NoHeaders));
/// ```
pub fn parse_message(raw: &[u8], config: &MailConfig) -> Result<ParsedMail, MailError> {
    let size = raw.len() as u64;
    if size > config.max_message_bytes {
        return Err(MailError::TooLarge {
            size,
            limit: config.max_message_bytes,
        });
    }
    catch_unwind(AssertUnwindSafe(|| extract(raw, config)))
        .unwrap_or_else(|panic| Err(MailError::Parser(panic_text(panic.as_ref()))))
}

fn extract(raw: &[u8], config: &MailConfig) -> Result<ParsedMail, MailError> {
    let message = MessageParser::default()
        .parse(raw)
        .ok_or(MailError::NoHeaders)?;
    let identified = message.message_id().is_some()
        || message.from().is_some()
        || message.to().is_some()
        || message.date().is_some()
        || message.subject().is_some();
    if !identified {
        return Err(MailError::NotAnEmail);
    }
    if let Some(boundary) = unclosed_boundary(&message) {
        return Err(MailError::Truncated { boundary });
    }
    let message_id = message.message_id().and_then(clean_id);
    let source_id = match &message_id {
        Some(id) => format!("mail/{id}"),
        None => format!("mail/sha256:{}", hex::encode(Sha256::digest(raw))),
    };
    let references = ids(message.references());
    let in_reply_to = ids(message.in_reply_to()).into_iter().next();
    let thread_id = references
        .first()
        .or(in_reply_to.as_ref())
        .map_or_else(|| source_id.clone(), |id| format!("mail/{id}"));
    let (text, charset) = body_text(&message);
    let split = split_body(&text, config.strip_quotes, config.strip_signatures);
    let recipients = parties(
        message
            .all_to()
            .chain(message.all_cc())
            .chain(message.all_bcc()),
    );
    Ok(ParsedMail {
        source_id,
        message_id,
        subject: message
            .subject()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        date: message
            .date()
            .filter(|date| date.is_valid())
            .map(|date| date.to_timestamp().saturating_mul(1000)),
        from: parties(message.from().into_iter()),
        recipients,
        in_reply_to,
        references,
        thread_id,
        body: split.body,
        quoted_text: split.quoted,
        signature: split.signature,
        charset,
        attachments: attachments(&message),
        readable_attachments: if config.read_attachments {
            readable_attachments(&message)
        } else {
            Vec::new()
        },
    })
}

impl ParsedMail {
    /// The events of this message: its `EMAIL` event ([`ParsedMail::into_event`]) and, for each
    /// attachment in [`ParsedMail::readable_attachments`], a `DOCUMENT` event holding its text:
    /// source id `<message source id>/attachment/<n>`, title the file's own or its name, the
    /// message's time, authors, recipients and thread, a link `attached_to` the message, and
    /// extras `attachment_of`, `file_name`, `media_type`, `format`, `parts`, `sha256`
    /// (of the file) and `truncated` when the text was cut.
    ///
    /// ```
    /// use epigraph_sources::mail::{MailConfig, parse_message};
    /// let raw = b"Message-ID: <m1@example.org>\nFrom: a@example.org\nSubject: Plan\n\
    ///     Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\n\
    ///     See attached.\n--b\nContent-Type: application/pdf; name=plan.pdf\n\
    ///     Content-Disposition: attachment; filename=plan.pdf\n\nnot a pdf\n--b--\n";
    /// let config = MailConfig::default();
    /// let events = parse_message(raw, &config).unwrap().into_events("acme", "inbox", 0, &config);
    /// assert_eq!(events.message.source_id, "mail/m1@example.org");
    /// assert!(events.attachments.is_empty());
    /// let (file, error) = &events.unreadable[0];
    /// assert_eq!((file.index, file.name.as_str()), (1, "plan.pdf"));
    /// assert!(error.to_string().starts_with("not a readable PDF file"));
    /// ```
    pub fn into_events(
        mut self,
        tenant: &str,
        mailbox: &str,
        ingested_at: i64,
        config: &MailConfig,
    ) -> MailEvents {
        let files = std::mem::take(&mut self.readable_attachments);
        let message = self.into_event(tenant, mailbox, ingested_at);
        let mut attachments = Vec::new();
        let mut unreadable = Vec::new();
        for file in files {
            match read_text(file.format, &file.bytes, &config.formats) {
                Ok(document) => attachments.push(attachment_event(&message, &file, document)),
                Err(error) => unreadable.push((file, error)),
            }
        }
        MailEvents {
            message,
            attachments,
            unreadable,
        }
    }

    /// The `EMAIL` event of this message for `tenant`; `mailbox` is the file or folder it was
    /// read from (the `mailbox` extra).
    pub fn into_event(self, tenant: &str, mailbox: &str, ingested_at: i64) -> SourceEvent {
        let mut event = SourceEvent::upsert(
            tenant,
            SourceKind::Email,
            &self.source_id,
            self.subject,
            self.body,
            ingested_at,
        );
        event.occurred_at = self.date;
        event.authors = self.from;
        event.participants = self.recipients;
        event.thread_id = Some(self.thread_id);
        event.links = self.attachments;
        if let Some(parent) = &self.in_reply_to {
            event.links.push(Link {
                rel: "reply_to".into(),
                target: format!("mail/{parent}"),
                media_type: None,
                size_bytes: None,
            });
        }
        let references = Some(self.references.join(" ")).filter(|r| !r.is_empty());
        let extras = [
            ("message_id", self.message_id),
            ("in_reply_to", self.in_reply_to),
            ("references", references),
            ("charset", self.charset),
            ("quoted_text", self.quoted_text),
            ("signature", self.signature),
            (
                "mailbox",
                Some(mailbox.to_string()).filter(|m| !m.is_empty()),
            ),
        ];
        for (key, value) in extras {
            if let Some(value) = value {
                event.extras.insert(key.to_string(), value);
            }
        }
        event
    }
}

/// The `DOCUMENT` event of an attachment's text (see [`ParsedMail::into_events`]).
fn attachment_event(
    message: &SourceEvent,
    file: &AttachedFile,
    document: DocumentText,
) -> SourceEvent {
    let source_id = format!("{}/attachment/{}", message.source_id, file.index);
    let mut event = attached_document(
        message,
        &source_id,
        &file.name,
        file.format,
        &file.bytes,
        document,
    );
    if let Some(mailbox) = message.extras.get("mailbox") {
        event.extras.insert("mailbox".into(), mailbox.clone());
    }
    event
}

/// A message id usable in a source id: no brackets, no spaces or control characters.
fn clean_id(id: &str) -> Option<String> {
    let id = id.trim().trim_start_matches('<').trim_end_matches('>');
    let usable = !id.is_empty()
        && id.len() <= 998
        && !id.chars().any(|c| c.is_whitespace() || c.is_control());
    usable.then(|| id.to_string())
}

/// The message ids of References or In-Reply-To, in order.
fn ids(value: &HeaderValue<'_>) -> Vec<String> {
    value
        .as_text_list()
        .unwrap_or_default()
        .iter()
        .filter_map(|id| clean_id(id))
        .collect()
}

/// Display names and addresses, in order, without duplicates or empty entries.
fn parties<'a, 'x: 'a>(addresses: impl Iterator<Item = &'a Address<'x>>) -> Vec<Party> {
    let mut parties = Vec::new();
    for addr in addresses.flat_map(|a| a.iter()) {
        let text = |s: Option<&str>| s.map(str::trim).filter(|s| !s.is_empty()).map(String::from);
        let party = Party {
            name: text(addr.name()),
            address: text(addr.address()),
        };
        let empty = party.name.is_none() && party.address.is_none();
        if !empty && !parties.contains(&party) {
            parties.push(party);
        }
    }
    parties
}

/// The readable text of the message body parts and the charset of the first one.
///
/// The parser already picked the text/plain side of a multipart/alternative; an HTML part it
/// chose (HTML-only messages) is converted to text here.
fn body_text(message: &Message<'_>) -> (String, Option<String>) {
    let mut texts = Vec::new();
    let mut charset = None;
    for part in message.text_bodies() {
        let text = match &part.body {
            PartType::Text(text) => text.to_string(),
            PartType::Html(html) => html_to_text(html),
            _ => continue,
        };
        if charset.is_none() {
            let declared = part.content_type().and_then(|ct| ct.attribute("charset"));
            charset = Some(declared.unwrap_or("us-ascii").trim().to_ascii_lowercase());
        }
        texts.push(text);
    }
    (texts.join("\n\n"), charset)
}

/// Attachment metadata: never the content.
fn attachments(message: &Message<'_>) -> Vec<Link> {
    message
        .attachments()
        .enumerate()
        .map(|(i, part)| Link {
            rel: "attachment".into(),
            target: attachment_name(part, i),
            media_type: media_type(part),
            size_bytes: i64::try_from(part.len()).ok(),
        })
        .collect()
}

/// The attachments whose text [`crate::formats`] reads, with their decoded bytes.
fn readable_attachments(message: &Message<'_>) -> Vec<AttachedFile> {
    message
        .attachments()
        .enumerate()
        .filter_map(|(i, part)| {
            let name = attachment_name(part, i);
            let media_type = media_type(part);
            let format = Format::detect(Some(&name), media_type.as_deref())?;
            Some(AttachedFile {
                index: i + 1,
                name,
                media_type,
                format,
                bytes: part.contents().to_vec(),
            })
        })
        .collect()
}

fn attachment_name(part: &MessagePart<'_>, i: usize) -> String {
    part.attachment_name()
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map_or_else(|| format!("attachment-{}", i + 1), String::from)
}

fn media_type(part: &MessagePart<'_>) -> Option<String> {
    part.content_type().map(|ct| {
        let media_type = match &ct.c_subtype {
            Some(subtype) => format!("{}/{}", ct.c_type, subtype),
            None => ct.c_type.to_string(),
        };
        media_type.to_ascii_lowercase()
    })
}

/// The first multipart boundary, in this message or a nested one, whose closing delimiter
/// (`--boundary--`) never appears: the message was cut.
fn unclosed_boundary(message: &Message<'_>) -> Option<String> {
    for part in &message.parts {
        if let Some(ct) = part.content_type()
            && ct.c_type.eq_ignore_ascii_case("multipart")
            && let Some(boundary) = ct.attribute("boundary")
        {
            let closing = format!("--{boundary}--");
            let raw: &[u8] = &message.raw_message;
            if !raw.windows(closing.len()).any(|w| w == closing.as_bytes()) {
                return Some(boundary.to_string());
            }
        }
        if let PartType::Message(nested) = &part.body
            && let Some(boundary) = unclosed_boundary(nested)
        {
            return Some(boundary);
        }
    }
    None
}
