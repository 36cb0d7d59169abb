//! `epigraph ingest <source> <path>`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Subcommand;
use epigraph_connectors::Scan;
use epigraph_connectors::docs::{Manifest, scan_folder};
use epigraph_connectors::kafka::{EventProducer, PublishReport, ensure_topics};
use indicatif::{ProgressBar, ProgressStyle};

use crate::config::EpigraphConfig;

/// The sources `epigraph ingest` reads.
#[derive(Debug, Subcommand)]
pub enum IngestSource {
    /// Markdown and text files in a folder; removed files are tombstoned on the next run.
    Docs {
        /// The folder.
        dir: PathBuf,
        /// Tenant the documents belong to.
        #[arg(long, default_value = "default")]
        tenant: String,
    },
    /// An unzipped Slack workspace export (users.json, channels.json, a folder per channel):
    /// one event per message, with threads, edits, mentions, files and joins.
    Slack {
        /// The export folder.
        dir: PathBuf,
        /// Tenant the workspace belongs to.
        #[arg(long, default_value = "default")]
        tenant: String,
    },
    /// An mbox file: one event per message, threaded by Message-ID/In-Reply-To/References.
    Mbox {
        /// The mbox file.
        path: PathBuf,
        /// Tenant the mailbox belongs to.
        #[arg(long, default_value = "default")]
        tenant: String,
    },
    /// A .eml file, or a folder searched for .eml files.
    Eml {
        /// The file or folder.
        path: PathBuf,
        /// Tenant the messages belong to.
        #[arg(long, default_value = "default")]
        tenant: String,
    },
    /// A maildir folder (cur/ and new/).
    Maildir {
        /// The maildir.
        path: PathBuf,
        /// Tenant the messages belong to.
        #[arg(long, default_value = "default")]
        tenant: String,
    },
    /// A file of webhook events, one JSON object per line (as `epigraph gen` writes them):
    /// each line is validated like a `POST /v1/ingest` body; bad lines are dead-lettered with
    /// `file:line`.
    Events {
        /// The `.jsonl` file.
        file: PathBuf,
        /// Tenant the events belong to.
        #[arg(long, default_value = "default")]
        tenant: String,
    },
    /// A BEIR-format folder: each line of `corpus.jsonl` becomes a document whose source id
    /// is its `_id`.
    Beir {
        /// The folder (or the corpus.jsonl file).
        dir: PathBuf,
        /// Tenant the corpus belongs to.
        #[arg(long, default_value = "default")]
        tenant: String,
    },
}

/// Publish a source. Bad items are dead-lettered and counted; only infrastructure failures are
/// errors (and a non-zero exit).
pub async fn ingest(config: &EpigraphConfig, source: IngestSource) -> Result<()> {
    let max = config.kafka.dead_letter_max_bytes;
    match source {
        IngestSource::Docs { dir, tenant } => ingest_docs(config, &dir, &tenant).await,
        IngestSource::Slack { dir, tenant } => {
            let scan =
                epigraph_connectors::slack::read_slack_export(&dir, &tenant, &config.slack, max)?;
            publish_scan(config, "slack", &tenant, scan).await
        }
        IngestSource::Mbox { path, tenant } => {
            let scan = epigraph_connectors::mail::read_mbox(&path, &tenant, &config.mail, max)?;
            publish_scan(config, "mbox", &tenant, scan).await
        }
        IngestSource::Eml { path, tenant } => {
            let scan = epigraph_connectors::mail::read_eml(&path, &tenant, &config.mail, max)?;
            publish_scan(config, "eml", &tenant, scan).await
        }
        IngestSource::Maildir { path, tenant } => {
            let scan = epigraph_connectors::mail::read_maildir(&path, &tenant, &config.mail, max)?;
            publish_scan(config, "maildir", &tenant, scan).await
        }
        IngestSource::Events { file, tenant } => {
            super::events::ingest_events(config, &file, &tenant).await
        }
        IngestSource::Beir { dir, tenant } => {
            let scan = epigraph_connectors::beir::read_corpus(&dir, &tenant, max)?;
            publish_scan(config, "beir", &tenant, scan).await
        }
    }
}

/// Publish a connector's scan and print the JSON summary.
async fn publish_scan(
    config: &EpigraphConfig,
    source: &str,
    tenant: &str,
    scan: Scan,
) -> Result<()> {
    let dead = scan.dead_letters.len();
    let report = publish(config, scan).await?;
    let summary = serde_json::json!({
        "source": source,
        "tenant": tenant,
        "published": report.published,
        "dead_lettered": dead + report.dead_lettered,
    });
    println!("{summary}");
    Ok(())
}

/// Publish dead letters, then events (with a progress bar), and wait for every acknowledgement.
async fn publish(config: &EpigraphConfig, scan: Scan) -> Result<PublishReport> {
    ensure_topics(&config.kafka)
        .await
        .context("creating topics (is Kafka up? deploy/local/services.sh up)")?;
    let producer = EventProducer::new(&config.kafka)?;
    for letter in &scan.dead_letters {
        producer.dead_letter(letter).await?;
    }
    let bar = progress_bar(scan.events.len() as u64, "publishing");
    let report = producer
        .publish(scan.events, |n| bar.set_position(n as u64))
        .await?;
    bar.finish_and_clear();
    producer.flush()?;
    Ok(report)
}

async fn ingest_docs(config: &EpigraphConfig, dir: &Path, tenant: &str) -> Result<()> {
    let root = dir
        .canonicalize()
        .with_context(|| format!("reading {}", dir.display()))?;
    let state_dir = config.state_dir();
    let previous = Manifest::load(&state_dir, tenant, &root)?;
    let scan = scan_folder(
        &root,
        tenant,
        &config.docs,
        &previous,
        config.kafka.dead_letter_max_bytes,
    )?;
    let tombstones = scan
        .events
        .iter()
        .filter(|e| e.op == epigraph_schemas::Op::Delete)
        .count();
    let dead = scan.dead_letters.len();
    let (unchanged, manifest) = (scan.unchanged, scan.next_manifest);
    let report = publish(
        config,
        Scan {
            events: scan.events,
            dead_letters: scan.dead_letters,
        },
    )
    .await?;
    // Saved only after every event was acknowledged: a failed run republishes.
    manifest.save(&state_dir)?;
    let summary = serde_json::json!({
        "source": "docs",
        "tenant": tenant,
        "published": report.published - tombstones.min(report.published),
        "tombstoned": tombstones,
        "unchanged": unchanged,
        "dead_lettered": dead + report.dead_lettered,
    });
    println!("{summary}");
    Ok(())
}

/// A progress bar on stderr (indicatif hides it when stderr is not a terminal).
pub fn progress_bar(len: u64, message: &'static str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} ({per_sec}, eta {eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(message);
    bar
}
