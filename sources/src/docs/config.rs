use serde::{Deserialize, Serialize};

/// How the documents source reads a folder.
///
/// ```toml
/// [docs]
/// extensions = ["md", "markdown", "txt", "html", "htm"]
/// max_file_bytes = 10485760
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DocsConfig {
    /// File extensions read, lower case, without the dot. Default `md`, `markdown`, `txt`,
    /// `html`, `htm` (HTML is read as its visible text, the title from `<title>` or the first
    /// `<h1>`).
    pub extensions: Vec<String>,
    /// Files larger than this many bytes are dead lettered instead of read. Default 10 MiB.
    pub max_file_bytes: u64,
    /// Follow symbolic links while walking the folder. Default false.
    pub follow_links: bool,
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
            ],
            max_file_bytes: 10 * 1024 * 1024,
            follow_links: false,
        }
    }
}
