use serde::{Deserialize, Serialize};

use crate::formats::FormatsConfig;

/// How the Slack source reads an unzipped workspace export.
///
/// Every field has a default, so an empty `[slack]` table reads the whole export.
///
/// ```toml
/// [slack]
/// channels = ["general", "design"]
/// skip_subtypes = ["bot_add", "bot_remove"]
/// include_attachments = true
/// include_files = true
/// max_day_file_bytes = 67108864
/// max_file_bytes = 67108864
/// follow_links = false
/// [slack.formats]          # limits of the PDF and Office readers
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SlackConfig {
    /// Channel folders to read, by channel name (or conversation id for direct messages, whose
    /// folders are named by id). Empty reads every channel. Default empty; example
    /// `["general", "design"]`.
    pub channels: Vec<String>,
    /// Message subtypes that are skipped without a dead letter, because they are not wanted
    /// (not because they are malformed). Membership subtypes such as `channel_join` are kept by
    /// default since they are facts about who was in a channel. Default empty; example
    /// `["bot_add", "bot_remove"]`.
    pub skip_subtypes: Vec<String>,
    /// Append the text of message attachments (pretext, title, text or fallback) to the body.
    /// Integrations (GitHub, CI) often post an empty `text` and say everything in attachments.
    /// Default true; example `false`.
    pub include_attachments: bool,
    /// Day files larger than this many bytes are dead lettered instead of read. Default 64 MiB
    /// (`67108864`); example `1048576`.
    pub max_day_file_bytes: u64,
    /// Read the shared files (`files` of a message) that the export holds: a PDF, Word,
    /// PowerPoint or Excel file found beside the export becomes its own document, linked to its
    /// message (see the [module documentation](super) for where files are looked for). Default
    /// true; example `false`.
    pub include_files: bool,
    /// Shared files larger than this many bytes are dead lettered instead of read. Default
    /// 64 MiB (`67108864`); example `10485760`.
    pub max_file_bytes: u64,
    /// Follow symbolic links to channel folders and day files. Default false; example `true`.
    pub follow_links: bool,
    /// Limits of the shared files' readers (`[slack.formats]`).
    pub formats: FormatsConfig,
}

impl Default for SlackConfig {
    fn default() -> Self {
        SlackConfig {
            channels: Vec::new(),
            skip_subtypes: Vec::new(),
            include_attachments: true,
            include_files: true,
            max_day_file_bytes: 64 * 1024 * 1024,
            max_file_bytes: 64 * 1024 * 1024,
            follow_links: false,
            formats: FormatsConfig::default(),
        }
    }
}
