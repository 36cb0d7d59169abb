//! Streaming a generated corpus to a folder: `events.jsonl`, `labels/*.jsonl`, `manifest.json`.
//!
//! Events and labels are written as they are generated (buffered files), so memory stays
//! O(entities) whatever the number of events; `entities.jsonl` and the manifest come last.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::{GenConfig, Generator};

/// Why a corpus could not be written (always the file system: check the path and free space).
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Creating or writing a file failed.
    #[error("writing {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// `manifest.json`: what was generated.
#[derive(Clone, Debug, Serialize)]
pub struct Manifest {
    /// `epigraph-gen`.
    pub generator: &'static str,
    /// The crate version that wrote the corpus.
    pub generator_version: &'static str,
    /// Seed.
    pub seed: u64,
    /// Requested number of events.
    pub scale: u64,
    /// Lines of `events.jsonl`.
    pub events: u64,
    /// Events per kind.
    pub kinds: BTreeMap<&'static str, u64>,
    /// Upserts, deletes, and edits (upserts of a source seen before).
    pub ops: BTreeMap<&'static str, u64>,
    /// Units per type.
    pub unit_types: BTreeMap<&'static str, u64>,
    /// Lines per label file.
    pub labels: BTreeMap<&'static str, u64>,
    /// `occurred_at` of the first and last event.
    pub first_occurred_at: i64,
    /// See `first_occurred_at`.
    pub last_occurred_at: i64,
    /// Bytes of `events.jsonl`.
    pub events_bytes: u64,
}

struct Sink {
    path: PathBuf,
    file: BufWriter<File>,
    lines: u64,
    bytes: u64,
}

impl Sink {
    fn create(path: PathBuf) -> Result<Self, WriteError> {
        let file = File::create(&path).map_err(|source| WriteError::Io {
            path: path.clone(),
            source,
        })?;
        Ok(Sink {
            path,
            file: BufWriter::with_capacity(1 << 20, file),
            lines: 0,
            bytes: 0,
        })
    }

    fn line(&mut self, record: &impl Serialize) -> Result<(), WriteError> {
        let mut bytes = serde_json::to_vec(record).expect("labels serialize");
        bytes.push(b'\n');
        self.bytes += bytes.len() as u64;
        self.lines += 1;
        self.file
            .write_all(&bytes)
            .map_err(|source| WriteError::Io {
                path: self.path.clone(),
                source,
            })
    }

    fn finish(mut self) -> Result<(u64, u64), WriteError> {
        self.file.flush().map_err(|source| WriteError::Io {
            path: self.path.clone(),
            source,
        })?;
        Ok((self.lines, self.bytes))
    }
}

const LABEL_FILES: [&str; 7] = [
    "units",
    "claims",
    "supersessions",
    "contradictions",
    "answers",
    "relations",
    "blocks",
];

/// Generate `config` into `dir` (created if missing), calling `progress` with the number of
/// events written every 1024 events and at the end.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let config = epigraph_gen::GenConfig { seed: 3, events: 100, ..Default::default() };
/// let manifest = epigraph_gen::write_corpus(dir.path(), &config, |_| {}).unwrap();
/// assert_eq!(manifest.events, 100);
/// assert!(dir.path().join("labels/entities.jsonl").is_file());
/// ```
pub fn write_corpus(
    dir: &Path,
    config: &GenConfig,
    mut progress: impl FnMut(u64),
) -> Result<Manifest, WriteError> {
    let labels_dir = dir.join("labels");
    std::fs::create_dir_all(&labels_dir).map_err(|source| WriteError::Io {
        path: labels_dir.clone(),
        source,
    })?;
    let mut events = Sink::create(dir.join("events.jsonl"))?;
    let mut sinks = LABEL_FILES
        .iter()
        .map(|name| Sink::create(labels_dir.join(format!("{name}.jsonl"))))
        .collect::<Result<Vec<_>, _>>()?;
    let mut manifest = Manifest {
        generator: "epigraph-gen",
        generator_version: env!("CARGO_PKG_VERSION"),
        seed: config.seed,
        scale: config.events,
        events: 0,
        kinds: BTreeMap::new(),
        ops: BTreeMap::new(),
        unit_types: BTreeMap::new(),
        labels: BTreeMap::new(),
        first_occurred_at: 0,
        last_occurred_at: 0,
        events_bytes: 0,
    };
    let mut generator = Generator::new(config.clone());
    for generated in generator.by_ref() {
        let event = &generated.event;
        if generated.line == 0 {
            manifest.first_occurred_at = event.occurred_at;
        }
        manifest.last_occurred_at = event.occurred_at;
        *manifest.kinds.entry(event.kind).or_default() += 1;
        *manifest.ops.entry(event.op).or_default() += 1;
        if generated.edit {
            *manifest.ops.entry("edit").or_default() += 1;
        }
        events.line(event)?;
        let labels = &generated.labels;
        for unit in &labels.units {
            *manifest.unit_types.entry(unit.memory_type).or_default() += 1;
            sinks[0].line(unit)?;
        }
        write_all(&mut sinks[1], &labels.claims)?;
        write_all(&mut sinks[2], &labels.supersessions)?;
        write_all(&mut sinks[3], &labels.contradictions)?;
        write_all(&mut sinks[4], &labels.answers)?;
        write_all(&mut sinks[5], &labels.relations)?;
        write_all(&mut sinks[6], &labels.blocks)?;
        manifest.events += 1;
        if manifest.events.is_multiple_of(1024) {
            progress(manifest.events);
        }
    }
    progress(manifest.events);
    let mut entities = Sink::create(labels_dir.join("entities.jsonl"))?;
    write_all(&mut entities, &generator.entity_labels())?;
    manifest.labels.insert("entities", entities.finish()?.0);
    for (name, sink) in LABEL_FILES.iter().zip(sinks) {
        manifest.labels.insert(name, sink.finish()?.0);
    }
    manifest.events_bytes = events.finish()?.1;
    let path = dir.join("manifest.json");
    let mut text = serde_json::to_string_pretty(&manifest).expect("manifest serializes");
    text.push('\n');
    std::fs::write(&path, text).map_err(|source| WriteError::Io { path, source })?;
    Ok(manifest)
}

fn write_all<T: Serialize>(sink: &mut Sink, records: &[T]) -> Result<(), WriteError> {
    records.iter().try_for_each(|record| sink.line(record))
}
