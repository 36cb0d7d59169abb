use serde::{Deserialize, Serialize};

use crate::formats::FormatsConfig;

/// How the documents source reads a folder.
///
/// ```toml
/// [docs]
/// extensions = ["md", "markdown", "txt", "html", "htm", "pdf", "docx", "pptx", "xlsx"]
/// max_file_bytes = 10485760
///
/// [docs.formats]          # limits of the PDF and Office readers
/// max_unpacked_bytes = 268435456
/// max_text_bytes = 8388608
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DocsConfig {
    /// File extensions read, lower case, without the dot. Default `md`, `markdown`, `txt`,
    /// `html`, `htm` (HTML is read as its visible text, the title from `<title>` or the first
    /// `<h1>`), and `pdf`, `docx`, `pptx`, `xlsx`, read as text by [`crate::formats`] (the title
    /// the file declares, else its first heading, else the file name); a file of those formats
    /// that cannot be read (password, no text layer, damaged) is a dead letter with the reason.
    pub extensions: Vec<String>,
    /// Files larger than this many bytes are dead lettered instead of read. Default 10 MiB.
    pub max_file_bytes: u64,
    /// Follow symbolic links while walking the folder. Default false.
    pub follow_links: bool,
    /// Limits of the PDF and Office readers (`[docs.formats]`).
    pub formats: FormatsConfig,
}

impl Default for DocsConfig {
    fn default() -> Self {
        DocsConfig {
            extensions: vec![
                "md".into(),
                "markdown".into(),
                "txt".into(),
                "html".into(),
                "htm".into(),
                "pdf".into(),
                "docx".into(),
                "pptx".into(),
                "xlsx".into(),
            ],
            max_file_bytes: 10 * 1024 * 1024,
            follow_links: false,
            formats: FormatsConfig::default(),
        }
    }
}
