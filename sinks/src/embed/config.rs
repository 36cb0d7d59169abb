use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Where the embedding model lives and how it is run.
///
/// ```toml
/// [model]
/// dir = "/root/.cache/epigraph/models/all-MiniLM-L6-v2"
/// batch_size = 32
/// kind = "model"      # or "static": the distilled token table, for bulk backfills
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
    /// `model` (default): the transformer, ~100 sentences/s on two cores. `static`: a table of
    /// one vector per vocabulary token distilled from the same model (each token's sentence
    /// vector), averaged with Zipf weights — thousands of times faster, at a quality cost
    /// measured in docs/measurements.md; for bulk backfills.
    pub kind: EmbedKind,
}

/// Which embedder computes the vectors.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmbedKind {
    /// The transformer.
    #[default]
    Model,
    /// The static token table distilled from it.
    Static,
}

impl Default for EmbedConfig {
    fn default() -> Self {
        EmbedConfig {
            dir: default_home().join("models/all-MiniLM-L6-v2"),
            batch_size: 32,
            max_tokens: 256,
            kind: EmbedKind::Model,
        }
    }
}

impl EmbedConfig {
    /// The id of the vectors this configuration computes: the model folder's name and the token
    /// limit (a longer limit changes the vectors of long texts). Part of every row's
    /// `text_hash`, so vectors of another model are never reused.
    ///
    /// ```
    /// use epigraph_sinks::embed::{EmbedConfig, EmbedKind};
    /// let config = EmbedConfig::default();
    /// assert_eq!(config.model_id(), "all-MiniLM-L6-v2@256");
    /// let fast = EmbedConfig { kind: EmbedKind::Static, ..config };
    /// assert_eq!(fast.model_id(), "all-MiniLM-L6-v2@256+static2");
    /// ```
    pub fn model_id(&self) -> String {
        let name = self
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".into());
        match self.kind {
            EmbedKind::Model => format!("{name}@{}", self.max_tokens),
            EmbedKind::Static => format!("{name}@{}+static2", self.max_tokens),
        }
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
