use serde::{Deserialize, Serialize};

use crate::formats::FormatsConfig;

/// How the e-mail source reads messages (mbox files, `.eml` files, maildir folders).
///
/// ```toml
/// [mail]
/// max_message_bytes = 26214400
/// strip_quotes = true
/// strip_signatures = true
/// read_attachments = true
///
/// [mail.formats]          # limits of the PDF and Office readers
/// max_text_bytes = 8388608
/// ```
///
/// ```
/// use epigraph_sources::mail::MailConfig;
/// let config: MailConfig = serde_json::from_str(r#"{"strip_quotes": false}"#).unwrap();
/// assert!(!config.strip_quotes && config.strip_signatures);
/// assert!(serde_json::from_str::<MailConfig>(r#"{"strip_quote": false}"#).is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MailConfig {
    /// Messages larger than this many bytes (raw, as stored, attachments included) are dead
    /// lettered instead of parsed. Default 25 MiB (`26214400`), the usual limit of mail servers.
    pub max_message_bytes: u64,
    /// Remove quoted replies from the body: `> ` lines, the `On … wrote:` line that introduces
    /// them and everything under an Outlook `-----Original Message-----` line. The removed text
    /// is kept in the event's `quoted_text` extra. Default true; example `false` to index whole
    /// threads from every message.
    pub strip_quotes: bool,
    /// Remove the signature: the lines after the last `-- ` delimiter line (RFC 3676), up to the
    /// next quoted block. The removed text is kept in the event's `signature` extra. Default true.
    pub strip_signatures: bool,
    /// Read the text of PDF, DOCX, PPTX and XLSX attachments (known by their media type, else
    /// their file name): each becomes its own `DOCUMENT` event, `<message id>/attachment/<n>`,
    /// linked to the message (`attached_to`); one that cannot be read is a dead letter with the
    /// reason and the attachment's bytes, and the message is published all the same. Default
    /// true; `false` keeps attachment metadata only.
    pub read_attachments: bool,
    /// Limits of the attachment readers (`[mail.formats]`).
    pub formats: FormatsConfig,
}

impl Default for MailConfig {
    fn default() -> Self {
        MailConfig {
            max_message_bytes: 25 * 1024 * 1024,
            strip_quotes: true,
            strip_signatures: true,
            read_attachments: true,
            formats: FormatsConfig::default(),
        }
    }
}
