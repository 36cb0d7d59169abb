use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Where the embedding model lives and how it is run.
///
/// ```toml
/// [model]
/// dir = "/root/.cache/epigraph/models/all-MiniLM-L6-v2"
/// batch_size = 32
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EmbedConfig {
    /// Folder with `config.json`, `tokenizer.json` and `model.safetensors`. Default
    /// `$EPIGRAPH_HOME/models/all-MiniLM-L6-v2`, where `EPIGRAPH_HOME` defaults to
    /// `~/.cache/epigraph` (where the local script puts it).
    pub dir: PathBuf,
    /// Texts per forward pass. Default 32.
    pub batch_size: usize,
    /// Tokens per text; longer texts are truncated. Default 256 (the model's training length).
    pub max_tokens: usize,
}

impl Default for EmbedConfig {
    fn default() -> Self {
        EmbedConfig {
            dir: default_home().join("models/all-MiniLM-L6-v2"),
            batch_size: 32,
            max_tokens: 256,
        }
    }
}

impl EmbedConfig {
    /// The id of the vectors this configuration computes: the model folder's name and the token
    /// limit (a longer limit changes the vectors of long texts). Part of every row's
    /// `text_hash`, so vectors of another model are never reused.
    ///
    /// ```
    /// let config = epigraph_connectors::embed::EmbedConfig::default();
    /// assert_eq!(config.model_id(), "all-MiniLM-L6-v2@256");
    /// ```
    pub fn model_id(&self) -> String {
        let name = self
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".into());
        format!("{name}@{}", self.max_tokens)
    }
}

/// `$EPIGRAPH_HOME`, or `~/.cache/epigraph`.
pub fn default_home() -> PathBuf {
    if let Some(home) = std::env::var_os("EPIGRAPH_HOME") {
        return PathBuf::from(home);
    }
    let user_home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    user_home.join(".cache/epigraph")
}
