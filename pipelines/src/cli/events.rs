//! `epigraph ingest events <file.jsonl>`: a file of webhook events, one JSON object per line
//! (what `epigraph gen` writes), published like a connector.
//!
//! Each line is validated exactly as `POST /v1/ingest` validates a body
//! ([`parse_event`](crate::serve::webhook::parse_event)); a bad line is dead-lettered with the
//! reason, `file:line` and its raw bytes, and the rest is read on. The file is streamed: memory
//! does not grow with its length, except 16 bytes per distinct source id, used to skip a line
//! that repeats the previous version of its source unchanged.

use std::collections::HashMap;
use std::fs::File;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::{BufRead, BufReader, Split};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use epigraph_schemas::{Op, SourceEvent};
use epigraph_sources::kafka::{DeadLetter, EventProducer, ensure_topics};

use crate::config::EpigraphConfig;
use crate::publish::progress_bar;
use crate::serve::webhook::parse_event;

/// The lines of an events file as source events; bad lines become dead letters on the side.
struct EventLines {
    path: PathBuf,
    lines: Split<BufReader<File>>,
    line: usize,
    tenant: String,
    dead_letter_max_bytes: usize,
    dead_letters: Vec<DeadLetter>,
    /// Last version published per source id (both hashed).
    last: HashMap<u64, u64>,
    unchanged: usize,
    tombstones: usize,
    error: Option<std::io::Error>,
}

fn hash(value: impl Hash) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

impl Iterator for EventLines {
    type Item = SourceEvent;

    fn next(&mut self) -> Option<SourceEvent> {
        loop {
            let raw = match self.lines.next()? {
                Ok(raw) => raw,
                Err(error) => {
                    self.error = Some(error);
                    return None;
                }
            };
            self.line += 1;
            if raw.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let now = epigraph_schemas::now_millis();
            match parse_event(&raw, &self.tenant, now) {
                Ok(mut event) => {
                    let version = hash((&event.version, event.op == Op::Delete));
                    if self.last.insert(hash(&event.source_id), version) == Some(version) {
                        self.unchanged += 1;
                        continue;
                    }
                    event.extras.insert("via".into(), "events-file".into());
                    self.tombstones += usize::from(event.op == Op::Delete);
                    return Some(event);
                }
                Err(reason) => {
                    let location = format!("{}:{}", self.path.display(), self.line);
                    self.dead_letters.push(DeadLetter::new(
                        &format!("{location}: {reason}"),
                        "events",
                        Some(&self.tenant),
                        &location,
                        &raw,
                        self.dead_letter_max_bytes,
                    ));
                }
            }
        }
    }
}

/// Publish every valid line of `path`, dead-letter the others, print the JSON summary.
pub async fn ingest_events(config: &EpigraphConfig, path: &Path, tenant: &str) -> Result<()> {
    epigraph_sources::scan::check_tenant(tenant)?;
    let open = || File::open(path).with_context(|| format!("reading {}", path.display()));
    let total = BufReader::with_capacity(1 << 20, open()?)
        .split(b'\n')
        .count();
    ensure_topics(&config.kafka)
        .await
        .context("creating topics (is Kafka up? deploy/local/services.sh up)")?;
    let producer = EventProducer::new(&config.kafka)?;
    let mut lines = EventLines {
        path: path.to_path_buf(),
        lines: BufReader::with_capacity(1 << 20, open()?).split(b'\n'),
        line: 0,
        tenant: tenant.to_string(),
        dead_letter_max_bytes: config.kafka.dead_letter_max_bytes,
        dead_letters: Vec::new(),
        last: HashMap::new(),
        unchanged: 0,
        tombstones: 0,
        error: None,
    };
    let bar = progress_bar(total as u64, "publishing");
    let report = producer
        .publish(&mut lines, |n| bar.set_position(n as u64))
        .await?;
    bar.finish_and_clear();
    if let Some(error) = lines.error.take() {
        // Everything before the failing line is published; a rerun skips nothing (no manifest)
        // and republishes, which is a no-op downstream.
        producer.flush()?;
        return Err(error)
            .with_context(|| format!("reading {} after line {}", path.display(), lines.line));
    }
    for letter in &lines.dead_letters {
        producer.dead_letter(letter).await?;
    }
    producer.flush()?;
    let summary = serde_json::json!({
        "source": "events",
        "tenant": tenant,
        "lines": lines.line,
        "published": report.published,
        "tombstones": lines.tombstones,
        "unchanged": lines.unchanged,
        "dead_lettered": lines.dead_letters.len() + report.dead_lettered,
    });
    println!("{summary}");
    Ok(())
}
