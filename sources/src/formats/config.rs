use serde::{Deserialize, Serialize};

/// Limits of the readers of binary document formats (PDF, DOCX, PPTX, XLSX), for the documents
/// source (`[docs.formats]`) and for e-mail attachments (`[mail.formats]`).
///
/// ```toml
/// [docs.formats]
/// max_unpacked_bytes = 268435456
/// max_text_bytes = 8388608
/// ```
///
/// ```
/// use epigraph_sources::formats::FormatsConfig;
/// let config: FormatsConfig = serde_json::from_str(r#"{"max_text_bytes": 1000}"#).unwrap();
/// assert_eq!(config.max_text_bytes, 1000);
/// assert_eq!(config.max_unpacked_bytes, FormatsConfig::default().max_unpacked_bytes);
/// assert!(serde_json::from_str::<FormatsConfig>(r#"{"max_text": 1}"#).is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FormatsConfig {
    /// The most bytes the parts of one DOCX, PPTX or XLSX file may unpack to (they are zip
    /// archives; a zip bomb of a few kilobytes can unpack to gigabytes). Over it the file is a
    /// dead letter with the reason. Default 256 MiB (`268435456`).
    pub max_unpacked_bytes: u64,
    /// The most text kept of one file, in bytes of UTF-8: a longer text is cut at a line end
    /// before the limit and its event says so (`truncated` extra). Default 8 MiB (`8388608`),
    /// half of `kafka.max_message_bytes`' default so the event is never refused for its size.
    pub max_text_bytes: usize,
}

impl Default for FormatsConfig {
    fn default() -> Self {
        FormatsConfig {
            max_unpacked_bytes: 256 * 1024 * 1024,
            max_text_bytes: 8 * 1024 * 1024,
        }
    }
}
