use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Where the LanceDB tables live.
///
/// ```toml
/// [lancedb]
/// dir = "/root/.cache/epigraph/lancedb"
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LanceConfig {
    /// Database directory or URI (`s3://…` for object storage). Default
    /// `$EPIGRAPH_HOME/lancedb` (`~/.cache/epigraph/lancedb`).
    pub dir: String,
    /// Name of the memory-object table. Default `memory`.
    pub memory_table: String,
    /// Whether rows get embeddings (needs the model). Default true; false keeps full-text only.
    pub embed: bool,
    /// How stale a reader may be, in milliseconds: after this long a read checks for versions
    /// written by another process (`epigraph serve` reading what `epigraph run` writes).
    /// 0 checks on every read. Default 500.
    pub read_consistency_ms: u64,
}

impl Default for LanceConfig {
    fn default() -> Self {
        let dir: PathBuf = crate::embed::EmbedConfig::default()
            .dir
            .parent()
            .and_then(|models| models.parent())
            .map(|home| home.join("lancedb"))
            .unwrap_or_else(|| PathBuf::from("lancedb"));
        LanceConfig {
            dir: dir.display().to_string(),
            memory_table: "memory".into(),
            embed: true,
            read_consistency_ms: 500,
        }
    }
}
