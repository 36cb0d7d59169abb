use std::path::Path;

use epigraph_schemas::{SourceEvent, SourceKind};
use serde::Deserialize;

use crate::kafka::DeadLetter;
use crate::{ConnectorError, Scan};

#[derive(Debug, Deserialize)]
struct CorpusLine {
    #[serde(rename = "_id")]
    id: serde_json::Value,
    #[serde(default)]
    title: Option<String>,
    text: String,
}

/// Read `corpus.jsonl` from a BEIR folder (or the file itself).
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("corpus.jsonl"),
///     "{\"_id\": \"d1\", \"title\": \"T\", \"text\": \"body\"}\nnot json\n").unwrap();
/// let scan = epigraph_connectors::beir::read_corpus(dir.path(), "eval", 1024).unwrap();
/// assert_eq!(scan.events[0].source_id, "d1");
/// assert!(scan.dead_letters[0].location.ends_with("corpus.jsonl:2"));
/// ```
pub fn read_corpus(
    path: &Path,
    tenant: &str,
    dead_letter_max_bytes: usize,
) -> Result<Scan, ConnectorError> {
    crate::scan::check_tenant(tenant)?;
    let file = if path.is_dir() {
        path.join("corpus.jsonl")
    } else {
        path.to_path_buf()
    };
    let bytes = std::fs::read(&file).map_err(ConnectorError::io(&file))?;
    let now = crate::now_millis();
    let mut scan = Scan::default();
    for (index, raw) in bytes.split(|b| *b == b'\n').enumerate() {
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let location = format!("{}:{}", file.display(), index + 1);
        match parse_line(raw) {
            Ok((id, title, text)) => {
                let mut event =
                    SourceEvent::upsert(tenant, SourceKind::Document, &id, title, text, now);
                event.extras.insert("corpus".into(), "beir".into());
                scan.events.push(event);
            }
            Err(reason) => {
                scan.dead_letters.push(DeadLetter::new(
                    &reason,
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

fn parse_line(raw: &[u8]) -> Result<(String, Option<String>, String), String> {
    let line: CorpusLine =
        serde_json::from_slice(raw).map_err(|e| format!("not a BEIR corpus line: {e}"))?;
    let id = match line.id {
        serde_json::Value::String(s) if !s.is_empty() => s,
        serde_json::Value::Number(n) => n.to_string(),
        other => {
            return Err(format!(
                "`_id` must be a non-empty string or a number, found {other}"
            ));
        }
    };
    let title = line.title.filter(|t| !t.trim().is_empty());
    Ok((id, title, line.text))
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
}
