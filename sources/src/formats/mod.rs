//! Binary document formats read as text: PDF, Word (DOCX), PowerPoint (PPTX) and Excel (XLSX).
//!
//! The documents source reads files of these formats in a folder, and the e-mail and Slack
//! sources read attachments of these formats; all through [`read_text`]; an attachment's text
//! becomes its own `DOCUMENT` event linked to its message ([`attached_document`]). What comes out is plain text laid
//! out so the extractor reads it like a Markdown file:
//! - **PDF** ([`pdf-extract`](https://crates.io/crates/pdf-extract) over `lopdf`): the text of
//!   every page, in page order, pages separated by a blank line; a first line that is the
//!   declared title becomes a `# ` heading. A password-protected PDF is
//!   opened with the empty password (what readers do for "owner-only" protection), else refused.
//! - **DOCX**: the paragraphs of `word/document.xml` in order; `Title`/`Heading n` styles become
//!   `#`/`n × #` headings, list paragraphs `- ` items, table rows `cell | cell` lines.
//! - **PPTX**: one `## Slide n` heading per slide (`ppt/slides/slide<n>.xml`, in file-number
//!   order) and its text frames' paragraphs. Speaker notes are not read.
//! - **XLSX**: one `## <sheet name>` heading per sheet in workbook order and one `a | b | c` line
//!   per row (shared and inline strings resolved, numbers as stored, formulas by their cached
//!   value).
//!
//! The title is the document's own (`dc:title` of an Office file, `/Title` of a PDF's info),
//! else left to the caller (its first heading or file name). Anything wrong with a file is a
//! [`FormatError`] that says what, never a panic: readers run under `catch_unwind`, zip parts
//! are read against [`FormatsConfig::max_unpacked_bytes`], and the text is cut at
//! [`FormatsConfig::max_text_bytes`].

mod config;
mod ooxml;
mod pdf;

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};

use epigraph_schemas::{Link, SourceEvent, SourceKind};
use sha2::{Digest, Sha256};

pub use config::FormatsConfig;

use crate::error::panic_text;

/// A binary document format this module reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Format {
    /// Portable Document Format.
    Pdf,
    /// Office Open XML word processing (Word 2007 and later).
    Docx,
    /// Office Open XML presentation (PowerPoint 2007 and later).
    Pptx,
    /// Office Open XML spreadsheet (Excel 2007 and later).
    Xlsx,
}

impl Format {
    /// Every format, in a fixed order.
    pub const ALL: [Format; 4] = [Format::Pdf, Format::Docx, Format::Pptx, Format::Xlsx];

    /// The format of a file extension (without the dot, any case).
    ///
    /// ```
    /// use epigraph_sources::formats::Format;
    /// assert_eq!(Format::from_extension("PDF"), Some(Format::Pdf));
    /// assert_eq!(Format::from_extension("doc"), None);
    /// ```
    pub fn from_extension(extension: &str) -> Option<Format> {
        Format::ALL
            .into_iter()
            .find(|format| extension.eq_ignore_ascii_case(format.extension()))
    }

    /// The format of a media type (parameters ignored, any case).
    ///
    /// ```
    /// use epigraph_sources::formats::Format;
    /// assert_eq!(Format::from_media_type("application/pdf; name=x.pdf"), Some(Format::Pdf));
    /// assert_eq!(Format::from_media_type("text/plain"), None);
    /// ```
    pub fn from_media_type(media_type: &str) -> Option<Format> {
        let essence = media_type.split(';').next().unwrap_or("").trim();
        Format::ALL
            .into_iter()
            .find(|format| essence.eq_ignore_ascii_case(format.media_type()))
    }

    /// The format of an attachment from its declared media type, else (a generic type such as
    /// `application/octet-stream`, or none) from its file name's extension.
    ///
    /// ```
    /// use epigraph_sources::formats::Format;
    /// assert_eq!(Format::detect(Some("Q3.xlsx"), Some("application/octet-stream")), Some(Format::Xlsx));
    /// assert_eq!(Format::detect(Some("notes.txt"), Some("text/plain")), None);
    /// ```
    pub fn detect(file_name: Option<&str>, media_type: Option<&str>) -> Option<Format> {
        media_type.and_then(Format::from_media_type).or_else(|| {
            let (_, extension) = file_name?.rsplit_once('.')?;
            Format::from_extension(extension)
        })
    }

    /// The usual file extension, lower case.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Pdf => "pdf",
            Format::Docx => "docx",
            Format::Pptx => "pptx",
            Format::Xlsx => "xlsx",
        }
    }

    /// The registered media type.
    pub fn media_type(self) -> &'static str {
        match self {
            Format::Pdf => "application/pdf",
            Format::Docx => {
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
            }
            Format::Pptx => {
                "application/vnd.openxmlformats-officedocument.presentationml.presentation"
            }
            Format::Xlsx => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Pdf => "PDF",
            Format::Docx => "DOCX",
            Format::Pptx => "PPTX",
            Format::Xlsx => "XLSX",
        })
    }
}

/// The text read from one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocumentText {
    /// The text, laid out as described in the [module documentation](self).
    pub text: String,
    /// The title the file declares, if any.
    pub title: Option<String>,
    /// Pages (PDF), slides (PPTX), sheets (XLSX) or 1 (DOCX).
    pub parts: usize,
    /// The text was cut at [`FormatsConfig::max_text_bytes`].
    pub truncated: bool,
}

/// Why a file could not be read as text; the text is the dead letter's reason.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// The bytes are not a well-formed file of the format.
    #[error("not a readable {format} file: {reason}")]
    Unreadable {
        /// The format it was read as.
        format: Format,
        /// What the reader found wrong.
        reason: String,
    },
    /// The file is protected by a password other than the empty one.
    #[error("the {format} file is protected by a password: its text cannot be read")]
    Encrypted {
        /// The format.
        format: Format,
    },
    /// The parts of an Office file unpack to more than the limit.
    #[error(
        "the {format} file unpacks to more than {limit} bytes (formats.max_unpacked_bytes): a zip bomb, or a file too large to read"
    )]
    TooLarge {
        /// The format.
        format: Format,
        /// The configured limit.
        limit: u64,
    },
    /// The file was read but holds no text.
    #[error(
        "the {format} file holds no text (an empty document, or a scan with no text layer: OCR is not done)"
    )]
    NoText {
        /// The format.
        format: Format,
    },
    /// The reader failed (a bug in it, caught so the rest of the folder or mailbox is read).
    #[error("the {format} reader failed on this file: {message}")]
    ReaderFailed {
        /// The format.
        format: Format,
        /// The reader's panic message.
        message: String,
    },
}

/// Read the text of one file of `format`.
///
/// ```
/// use epigraph_sources::formats::{Format, FormatError, FormatsConfig, read_text};
/// let error = read_text(Format::Docx, b"not a zip", &FormatsConfig::default()).unwrap_err();
/// assert!(matches!(error, FormatError::Unreadable { format: Format::Docx, .. }));
/// assert!(error.to_string().starts_with("not a readable DOCX file: "));
/// ```
pub fn read_text(
    format: Format,
    bytes: &[u8],
    config: &FormatsConfig,
) -> Result<DocumentText, FormatError> {
    quiet_reader_panics();
    let read = catch_unwind(AssertUnwindSafe(|| match format {
        Format::Pdf => pdf::read(bytes),
        Format::Docx => ooxml::read_docx(bytes, config.max_unpacked_bytes),
        Format::Pptx => ooxml::read_pptx(bytes, config.max_unpacked_bytes),
        Format::Xlsx => ooxml::read_xlsx(bytes, config.max_unpacked_bytes),
    }));
    let mut document = match read {
        Ok(result) => result?,
        Err(panic) => {
            return Err(FormatError::ReaderFailed {
                format,
                message: panic_text(panic.as_ref()),
            });
        }
    };
    document.text = tidy(&document.text);
    if document.text.is_empty() {
        return Err(FormatError::NoText { format });
    }
    if document.text.len() > config.max_text_bytes {
        document.text = cut(&document.text, config.max_text_bytes).to_string();
        document.truncated = true;
    }
    document.title = document
        .title
        .map(|title| title.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|title| !title.is_empty() && !is_placeholder_title(title));
    Ok(document)
}

/// Trailing spaces off every line, runs of blank lines down to one, no blank start or end.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = false;
    for line in text.lines().map(str::trim_end) {
        if line.trim().is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if blank {
            out.push('\n');
            blank = false;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(line);
    }
    out
}

/// The longest prefix of `text` within `limit` bytes that ends at a line end (or, when the
/// first line is longer, at a character boundary).
fn cut(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[..end].rfind('\n') {
        Some(line_end) if line_end > 0 => &text[..line_end],
        _ => &text[..end],
    }
}

/// Titles that tools write when the author gave none.
fn is_placeholder_title(title: &str) -> bool {
    let lower = title.to_lowercase();
    [
        "untitled",
        "(anonymous)",
        "anonymous",
        "powerpoint presentation",
    ]
    .iter()
    .any(|placeholder| lower == *placeholder)
}

/// The PDF crates panic on many damaged files (an `unwrap` on a missing dictionary entry); those
/// panics are caught and become [`FormatError::ReaderFailed`] dead letters, so the default
/// hook's "thread panicked" message on stderr would read like a crash. Once per process, the
/// hook is wrapped so that panics raised inside those crates are logged at debug level instead;
/// every other panic reaches the previous hook unchanged.
fn quiet_reader_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let file = info.location().map(|l| l.file()).unwrap_or("");
            let in_reader = ["pdf-extract", "lopdf", "adobe-cmap-parser", "cff-parser", "type1-encoding-parser"]
                .iter()
                .any(|krate| file.contains(&format!("/{krate}-")));
            if in_reader {
                tracing::debug!(at = %file, "a document reader panicked; the file is dead-lettered");
            } else {
                previous(info);
            }
        }));
    });
}

#[cfg(test)]
mod tests;

/// The `DOCUMENT` event of a file attached to `parent` (a mail message, a Slack message): its
/// text under `source_id`, titled by the document's own title or the file name, dated, authored
/// and threaded like its message, with an `attached_to` link to it and the extras
/// `attachment_of`, `file_name`, `media_type`, `format`, `parts`, `sha256` (of the file's
/// bytes) and `truncated`.
///
/// ```
/// use epigraph_schemas::{SourceEvent, SourceKind};
/// use epigraph_sources::formats::{DocumentText, Format, attached_document};
/// let message = SourceEvent::upsert("acme", SourceKind::Chat, "slack/general/1.0", None, "See the plan.".into(), 0);
/// let text = DocumentText { text: "We ship in June.".into(), title: None, parts: 1, truncated: false };
/// let event = attached_document(&message, "slack/general/1.0/file/F1", "plan.docx", Format::Docx, b"PK", text);
/// assert_eq!((event.source_kind, event.title.as_deref()), (SourceKind::Document, Some("plan.docx")));
/// assert_eq!(event.links[0].rel, "attached_to");
/// assert_eq!(event.extras["attachment_of"], "slack/general/1.0");
/// ```
pub fn attached_document(
    parent: &SourceEvent,
    source_id: &str,
    file_name: &str,
    format: Format,
    bytes: &[u8],
    document: DocumentText,
) -> SourceEvent {
    let title = document.title.unwrap_or_else(|| file_name.to_string());
    let mut event = SourceEvent::upsert(
        &parent.tenant,
        SourceKind::Document,
        source_id,
        Some(title),
        document.text,
        parent.ingested_at,
    );
    event.occurred_at = parent.occurred_at;
    event.authors = parent.authors.clone();
    event.participants = parent.participants.clone();
    event.thread_id = parent.thread_id.clone();
    event.links.push(Link {
        rel: "attached_to".into(),
        target: parent.source_id.clone(),
        media_type: None,
        size_bytes: None,
    });
    let extras = [
        ("attachment_of", Some(parent.source_id.clone())),
        ("file_name", Some(file_name.to_string())),
        ("media_type", Some(format.media_type().to_string())),
        ("format", Some(format.extension().to_string())),
        ("parts", Some(document.parts.to_string())),
        ("sha256", Some(hex::encode(Sha256::digest(bytes)))),
        ("truncated", document.truncated.then(|| "true".to_string())),
    ];
    for (key, value) in extras {
        if let Some(value) = value {
            event.extras.insert(key.to_string(), value);
        }
    }
    event
}
