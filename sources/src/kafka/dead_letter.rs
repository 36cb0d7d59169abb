use base64::Engine;
use serde::{Deserialize, Serialize};

/// An item that could not be parsed or validated, as published to `epigraph.dlq` (JSON).
///
/// Nothing is dropped silently: the reason, where the item came from and its raw bytes (capped)
/// travel together so the item can be inspected and replayed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadLetter {
    /// Why it was rejected, in words a user can act on.
    pub reason: String,
    /// Who rejected it: a connector (`docs`, `slack`, …) or `run` for undecodable events.
    pub stage: String,
    /// Tenant, when known.
    pub tenant: Option<String>,
    /// Where it came from: a file path with line or byte offset, or `topic/partition@offset`.
    pub location: String,
    /// The raw bytes, base64, cut at the configured cap.
    pub raw_base64: String,
    /// Size of the raw item before capping, in bytes.
    pub raw_size: usize,
    /// When it was rejected (ms since the Unix epoch).
    pub at: i64,
    /// When this letter is a replayed item refused again: the letter it replays
    /// (`<partition>@<offset>` on the dead-letter topic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_of: Option<String>,
}

impl DeadLetter {
    /// A dead letter for `raw`, capped at `max_bytes`.
    ///
    /// ```
    /// use epigraph_sources::kafka::DeadLetter;
    /// let letter = DeadLetter::new("bad utf-8", "docs", None, "a.md:1", b"\xff\xfe", 1024);
    /// assert_eq!((letter.raw_size, letter.raw_base64.as_str()), (2, "//4="));
    /// ```
    pub fn new(
        reason: &str,
        stage: &str,
        tenant: Option<&str>,
        location: &str,
        raw: &[u8],
        max_bytes: usize,
    ) -> Self {
        let kept = &raw[..raw.len().min(max_bytes)];
        DeadLetter {
            reason: reason.to_string(),
            stage: stage.to_string(),
            tenant: tenant.map(str::to_string),
            location: location.to_string(),
            raw_base64: base64::engine::general_purpose::STANDARD.encode(kept),
            raw_size: raw.len(),
            at: crate::now_millis(),
            replay_of: None,
        }
    }

    /// The raw bytes as kept (empty when `raw_base64` is not base64).
    ///
    /// ```
    /// use epigraph_sources::kafka::DeadLetter;
    /// let letter = DeadLetter::new("too long", "docs", None, "a.md", b"abcdef", 4);
    /// assert_eq!(letter.raw(), b"abcd");
    /// ```
    pub fn raw(&self) -> Vec<u8> {
        base64::engine::general_purpose::STANDARD
            .decode(&self.raw_base64)
            .unwrap_or_default()
    }
}
