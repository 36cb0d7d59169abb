//! The answers on disk, one JSON file per extraction under `cache_dir`, named by the key: a
//! hash of the prompt version, the model, the answer limit and everything sent about the unit
//! (its text, the entities and memory objects shown, the schema). Replaying the same units
//! against the same graph makes no call and gives the same proposals. Files are written to a
//! temporary name and renamed, so a stopped run never leaves half an answer.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::client::Message;
use super::validate::Answer;

/// The version of the prompt: change it when the prompt's wording or the answer's handling
/// changes, so old answers are not reused.
pub const PROMPT_VERSION: &str = "epigraph-llm-2";

/// The outcome of one extraction, as cached.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// The accepted answer; `None` when every try was rejected (the rules' result stands).
    pub answer: Option<Answer>,
    /// The reason of every rejected try, in order.
    pub rejections: Vec<String>,
    /// The metric label of every rejected try.
    pub rejection_codes: Vec<String>,
    /// What the accepted answer lost, with the reasons: relations and edges the last try got
    /// wrong ([`super::validate::salvage`]); empty when an answer was sound.
    #[serde(default)]
    pub dropped: Vec<String>,
    /// Calls made.
    pub calls: u32,
    /// Prompt tokens over the calls.
    pub prompt_tokens: u64,
    /// Completion tokens over the calls.
    pub completion_tokens: u64,
    /// Time spent in the calls, in ms.
    pub latency_ms: u64,
}

/// The cache key of an extraction.
///
/// ```
/// use epigraph::llm::cache::key;
/// use epigraph::llm::client::Message;
/// let messages = [Message::new("user", "We chose Postgres.")];
/// let schema = serde_json::json!({});
/// assert_eq!(key("m", 256, &messages, &schema), key("m", 256, &messages, &schema));
/// assert_ne!(key("m", 256, &messages, &schema), key("other", 256, &messages, &schema));
/// assert_eq!(key("m", 256, &messages, &schema).len(), 64);
/// ```
pub fn key(
    model: &str,
    max_tokens: u32,
    messages: &[Message],
    schema: &serde_json::Value,
) -> String {
    let mut hash = Sha256::new();
    for part in [
        PROMPT_VERSION.to_string(),
        model.to_string(),
        max_tokens.to_string(),
        serde_json::to_string(messages).expect("messages serialize"),
        schema.to_string(),
    ] {
        hash.update(part.len().to_le_bytes());
        hash.update(part.as_bytes());
    }
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Why the cache could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// A file operation failed.
    #[error("llm cache {path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// The answers cached in one folder.
#[derive(Clone, Debug)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// A cache in `dir` (created if missing).
    pub fn open(dir: &Path) -> Result<Self, CacheError> {
        std::fs::create_dir_all(dir).map_err(|source| CacheError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        Ok(Cache {
            dir: dir.to_path_buf(),
        })
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    /// The cached outcome of `key`; an unreadable entry counts as absent.
    pub fn get(&self, key: &str) -> Option<Outcome> {
        let text = std::fs::read(self.path(key)).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// Keep `outcome` under `key`.
    pub fn put(&self, key: &str, outcome: &Outcome) -> Result<(), CacheError> {
        let path = self.path(key);
        let tmp = self.dir.join(format!(".{key}.tmp"));
        let io = |source| CacheError::Io {
            path: path.clone(),
            source,
        };
        std::fs::write(
            &tmp,
            serde_json::to_vec_pretty(outcome).expect("serializes"),
        )
        .map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcome_round_trips_and_a_missing_key_is_absent() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(&dir.path().join("c")).unwrap();
        let outcome = Outcome {
            answer: None,
            rejections: vec!["the answer is not JSON: EOF".into()],
            rejection_codes: vec!["not_json".into()],
            dropped: Vec::new(),
            calls: 1,
            prompt_tokens: 10,
            completion_tokens: 2,
            latency_ms: 5,
        };
        assert!(cache.get("k").is_none());
        cache.put("k", &outcome).unwrap();
        assert_eq!(cache.get("k"), Some(outcome));
    }
}
