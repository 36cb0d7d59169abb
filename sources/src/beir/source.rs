use std::path::Path;

use epigraph_schemas::{SourceEvent, SourceKind};
use serde::Deserialize;

use crate::kafka::DeadLetter;
use crate::{Scan, SourceError};

#[derive(Debug, Deserialize)]
struct CorpusLine {
    #[serde(rename = "_id")]
    id: serde_json::Value,
    #[serde(default)]
    title: Option<String>,
    text: String,
    #[serde(default)]
    metadata: Option<serde_json::Value>,
}

/// What the optional `metadata` object of a corpus line may say about the document: when it
/// was written (`occurred_at`: ms since the Unix epoch or RFC 3339), its connector family
/// (`kind`: `document`, `chat`, `email`, `calendar`) and, for a revised document, when each part
/// of its text was written (`written`: `start-end@ms` spans in characters, `;`-separated, passed
/// on as the event's `written` extra). Time matters to an epistemic memory: without it nothing
/// can supersede anything.
#[derive(Debug, Default, PartialEq)]
struct LineMetadata {
    occurred_at: Option<i64>,
    kind: Option<SourceKind>,
    written: Option<String>,
}

/// Why a corpus line is dead-lettered (the text is the dead letter's reason).
#[derive(Debug, thiserror::Error)]
enum LineError {
    /// The line is not a JSON corpus object.
    #[error("not a BEIR corpus line: {0}")]
    NotJson(#[source] serde_json::Error),
    /// `_id` is neither a non-empty string nor a number.
    #[error("`_id` must be a non-empty string or a number, found {0}")]
    Id(serde_json::Value),
    /// `metadata.occurred_at` is a number but not an integer.
    #[error("metadata.occurred_at {0} is not whole milliseconds")]
    FractionalTime(serde_json::Number),
    /// `metadata.occurred_at` is a string but not an RFC 3339 time.
    #[error("metadata.occurred_at {value:?} is not RFC 3339: {source}")]
    NotRfc3339 {
        /// The time as written.
        value: String,
        /// Why it does not parse.
        source: chrono::ParseError,
    },
    /// `metadata.occurred_at` is neither a number nor a string.
    #[error("metadata.occurred_at {0} is not a time")]
    NotATime(serde_json::Value),
    /// `metadata.kind` names no source kind.
    #[error("metadata.kind {0:?} is unknown")]
    UnknownKind(String),
    /// `metadata.written` is not a string.
    #[error("metadata.written {0} is not a string of spans")]
    Written(serde_json::Value),
}

fn metadata_of(value: Option<&serde_json::Value>) -> Result<LineMetadata, LineError> {
    let Some(object) = value.and_then(|v| v.as_object()) else {
        return Ok(LineMetadata::default());
    };
    let occurred_at = match object.get("occurred_at") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::Number(n)) => Some(
            n.as_i64()
                .ok_or_else(|| LineError::FractionalTime(n.clone()))?,
        ),
        Some(serde_json::Value::String(s)) => Some(
            chrono::DateTime::parse_from_rfc3339(s)
                .map_err(|source| LineError::NotRfc3339 {
                    value: s.clone(),
                    source,
                })?
                .timestamp_millis(),
        ),
        Some(other) => return Err(LineError::NotATime(other.clone())),
    };
    let kind = match object.get("kind").and_then(|k| k.as_str()) {
        None => None,
        Some(name) => {
            Some(SourceKind::parse(name).ok_or_else(|| LineError::UnknownKind(name.to_string()))?)
        }
    };
    let written = match object.get("written") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(spans)) => Some(spans.clone()),
        Some(other) => return Err(LineError::Written(other.clone())),
    };
    Ok(LineMetadata {
        occurred_at,
        kind,
        written,
    })
}

/// Read `corpus.jsonl` from a BEIR folder (or the file itself).
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("corpus.jsonl"),
///     "{\"_id\": \"d1\", \"title\": \"T\", \"text\": \"body\"}\nnot json\n").unwrap();
/// let scan = epigraph_sources::beir::read_corpus(dir.path(), "eval", 1024).unwrap();
/// assert_eq!(scan.events[0].source_id, "d1");
/// assert!(scan.dead_letters[0].location.ends_with("corpus.jsonl:2"));
/// ```
pub fn read_corpus(
    path: &Path,
    tenant: &str,
    dead_letter_max_bytes: usize,
) -> Result<Scan, SourceError> {
    crate::scan::check_tenant(tenant)?;
    let file = if path.is_dir() {
        path.join("corpus.jsonl")
    } else {
        path.to_path_buf()
    };
    let bytes = std::fs::read(&file).map_err(SourceError::io(&file))?;
    let now = crate::now_millis();
    let mut scan = Scan::default();
    for (index, raw) in bytes.split(|b| *b == b'\n').enumerate() {
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let location = format!("{}:{}", file.display(), index + 1);
        match parse_line(raw) {
            Ok((id, title, text, metadata)) => {
                let kind = metadata.kind.unwrap_or(SourceKind::Document);
                let mut event = SourceEvent::upsert(tenant, kind, &id, title, text, now);
                event.occurred_at = metadata.occurred_at.or(event.occurred_at);
                event.extras.insert("corpus".into(), "beir".into());
                if let Some(written) = metadata.written {
                    event.extras.insert("written".into(), written);
                }
                scan.events.push(event);
            }
            Err(error) => {
                scan.dead_letters.push(DeadLetter::new(
                    &error.to_string(),
                    "beir",
                    Some(tenant),
                    &location,
                    raw,
                    dead_letter_max_bytes,
                ));
            }
        }
    }
    Ok(scan)
}

fn parse_line(raw: &[u8]) -> Result<(String, Option<String>, String, LineMetadata), LineError> {
    let line: CorpusLine = serde_json::from_slice(raw).map_err(LineError::NotJson)?;
    let id = match line.id {
        serde_json::Value::String(s) if !s.is_empty() => s,
        serde_json::Value::Number(n) => n.to_string(),
        other => return Err(LineError::Id(other)),
    };
    let title = line.title.filter(|t| !t.trim().is_empty());
    let metadata = metadata_of(line.metadata.as_ref())?;
    Ok((id, title, line.text, metadata))
}

#[cfg(test)]
mod fuzz {
    use super::read_corpus;

    /// A corpus of 100,000 random and mutated lines (`EPIGRAPH_FUZZ_CASES` overrides the count),
    /// read in one pass: no panic, and every non-blank line is an event or a dead letter.
    #[test]
    fn every_line_of_a_random_corpus_is_an_event_or_a_dead_letter() {
        let seed = r#"{"_id": "d1", "title": "Atlas", "text": "We ship in June.", "metadata": {}}"#;
        let alphabet = b"{}[]\":,_idtitlextm 0123456789\\u";
        let mut rng = crate::testing::Lcg(0xbe1e);
        let cases: usize = std::env::var("EPIGRAPH_FUZZ_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(100_000);
        let mut corpus = Vec::new();
        let mut lines = 0;
        for case in 0..cases {
            let mut line = seed.as_bytes().to_vec();
            if case % 3 == 0 {
                line = (0..rng.below(60))
                    .map(|_| alphabet[rng.below(alphabet.len())])
                    .collect();
            } else if case % 3 == 1 {
                let at = rng.below(line.len());
                line[at] = alphabet[rng.below(alphabet.len())];
            } else {
                // A well-formed line with a unique id.
                line = format!(r#"{{"_id": "d{case}", "text": "t{case}"}}"#).into_bytes();
            }
            line.retain(|b| *b != b'\n' && *b != b'\r');
            if !String::from_utf8_lossy(&line).trim().is_empty() {
                lines += 1;
            }
            corpus.extend_from_slice(&line);
            corpus.push(b'\n');
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("corpus.jsonl");
        std::fs::write(&path, &corpus).unwrap();
        let scan = read_corpus(&path, "acme", 256).expect("a corpus file is never fatal");
        assert_eq!(scan.events.len() + scan.dead_letters.len(), lines);
        assert!(scan.events.len() >= cases / 3);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_ids_titles_and_bad_lines() {
        let dir = tempfile::tempdir().unwrap();
        let corpus = "{\"_id\": 7, \"title\": \"\", \"text\": \"seven\"}\n\n{\"_id\": \"\", \"text\": \"x\"}\n{\"_id\": \"a\"}\n";
        std::fs::write(dir.path().join("corpus.jsonl"), corpus).unwrap();
        let scan = read_corpus(dir.path(), "t", 64).unwrap();
        assert_eq!(scan.events.len(), 1);
        assert_eq!(
            (
                scan.events[0].source_id.as_str(),
                scan.events[0].title.as_deref()
            ),
            ("7", None)
        );
        assert_eq!(scan.dead_letters.len(), 2);
        assert!(
            scan.dead_letters[0].reason.contains("non-empty"),
            "{}",
            scan.dead_letters[0].reason
        );
        assert!(
            scan.dead_letters[1].reason.contains("missing field `text`"),
            "{}",
            scan.dead_letters[1].reason
        );
        assert!(scan.dead_letters[1].location.ends_with(":4"));
    }

    #[test]
    fn metadata_gives_time_and_kind() {
        let dir = tempfile::tempdir().unwrap();
        let corpus = concat!(
            "{\"_id\": \"a\", \"text\": \"x\", \"metadata\": {\"occurred_at\": 1000, \"kind\": \"chat\"}}\n",
            "{\"_id\": \"b\", \"text\": \"y\", \"metadata\": {\"occurred_at\": \"1970-01-01T00:00:02Z\"}}\n",
            "{\"_id\": \"c\", \"text\": \"z\", \"metadata\": {\"occurred_at\": \"soon\"}}\n",
            "{\"_id\": \"d\", \"text\": \"Old. New.\", \"metadata\": {\"written\": \"0-4@1;5-9@2\"}}\n",
            "{\"_id\": \"e\", \"text\": \"w\", \"metadata\": {\"written\": [1, 2]}}\n",
        );
        std::fs::write(dir.path().join("corpus.jsonl"), corpus).unwrap();
        let scan = read_corpus(dir.path(), "t", 256).unwrap();
        assert_eq!(scan.events[0].occurred_at, Some(1000));
        assert_eq!(scan.events[0].source_kind, SourceKind::Chat);
        assert_eq!(scan.events[1].occurred_at, Some(2000));
        assert_eq!(scan.events[1].source_kind, SourceKind::Document);
        assert!(scan.dead_letters[0].reason.contains("RFC 3339"));
        // Written spans of a revised text pass on as the event's `written` extra.
        assert_eq!(
            scan.events[2].extras.get("written").map(String::as_str),
            Some("0-4@1;5-9@2")
        );
        assert!(scan.dead_letters[1].reason.contains("metadata.written"));
    }
}
