//! `epigraph ingest <source> <path>`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Subcommand;
use epigraph_sources::Scan;
use epigraph_sources::docs::{Manifest, scan_folder};
use epigraph_sources::source::{BeirCorpus, Eml, IcsFile, Maildir, Mbox, SlackExport, Source};

use crate::config::EpigraphConfig;
use crate::publish::publish;

/// The sources `epigraph ingest` reads.
#[derive(Debug, Subcommand)]
pub enum IngestSource {
    /// Markdown, text and HTML files in a folder; removed files are tombstoned on the next run.
    Docs {
        /// The folder.
        dir: PathBuf,
        /// Tenant the documents belong to.
        #[arg(long, default_value = "default")]
        tenant: String,
        /// Keep watching: rescan every `--interval-ms`, republish files whose content changed and
        /// tombstone removed ones, until interrupted (Ctrl-C).
        #[arg(long)]
        watch: bool,
        /// Rescan period of `--watch`, in milliseconds.
        #[arg(long, default_value_t = 2000)]
        interval_ms: u64,
    },
    /// A Slack workspace export, the `.zip` or its folder (users.json, channels.json, a folder
    /// per channel): one event per message, with threads, edits, mentions, files and joins.
    Slack {
        /// The export `.zip` or folder.
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
    /// An iCalendar file, or a folder searched for .ics files: one event per VEVENT, or per
    /// occurrence of a recurring one inside the window (`[ics]` in the config); cancelled
    /// events and occurrences become tombstones.
    Ics {
        /// The file or folder.
        path: PathBuf,
        /// Tenant the calendars belong to.
        #[arg(long, default_value = "default")]
        tenant: String,
        /// Expand recurrences from this date (YYYY-MM-DD), overriding `ics.window_start`.
        #[arg(long)]
        window_start: Option<String>,
        /// … up to this date (YYYY-MM-DD, exclusive), overriding `ics.window_end`.
        #[arg(long)]
        window_end: Option<String>,
    },
    /// A calendar collection on a CalDAV server (e.g. `https://cal.example/dav/alice/work/`):
    /// only what changed since the last sync is fetched (sync tokens), each object is read
    /// like an `.ics` file (`[ics]` window), removed objects become tombstones. Credentials:
    /// `[caldav] username` and `EPIGRAPH_CALDAV__PASSWORD`.
    Caldav {
        /// The calendar collection's URL.
        url: String,
        /// Tenant the calendar belongs to.
        #[arg(long, default_value = "default")]
        tenant: String,
        /// Keep following: sync every `caldav.poll_interval_ms` until interrupted (Ctrl-C); a
        /// server that cannot be reached is retried with backoff.
        #[arg(long)]
        follow: bool,
        /// Expand recurrences from this date (YYYY-MM-DD), overriding `ics.window_start`.
        #[arg(long)]
        window_start: Option<String>,
        /// … up to this date (YYYY-MM-DD, exclusive), overriding `ics.window_end`.
        #[arg(long)]
        window_end: Option<String>,
        /// Serve the follower's Prometheus metrics (`GET /metrics`: server up, syncs by
        /// outcome, published, backoff) on this address.
        #[arg(long)]
        metrics_listen: Option<String>,
    },
    /// A topic another system produces (Kafka Connect, Debezium), declared as `[[sources.topic]]`
    /// in the configuration: each record is mapped to an event (JSON or registry Avro; Debezium
    /// envelopes; null values and `op=d` become tombstones); bad records are dead-lettered. The
    /// source offsets are committed (group `<kafka.group_id>.topic.<name>`) after publishing.
    Topic {
        /// The `name` of the `[[sources.topic]]` entry.
        name: String,
        /// Keep following until interrupted (Ctrl-C) instead of stopping at the topic's end.
        #[arg(long)]
        follow: bool,
        /// Serve the follower's Prometheus metrics (`GET /metrics`) on this address.
        #[arg(long)]
        metrics_listen: Option<String>,
    },
    /// Mailboxes on an IMAP server (`[imap] host`, `mailboxes`): each message is read once
    /// (UIDVALIDITY/UID state) like an `.eml` file; expunged messages become tombstones, moves
    /// between followed mailboxes stay live. Credentials: `[imap] username` and
    /// `EPIGRAPH_IMAP__PASSWORD`.
    Imap {
        /// Tenant the mail belongs to.
        #[arg(long, default_value = "default")]
        tenant: String,
        /// Follow this mailbox (repeatable), replacing `imap.mailboxes`.
        #[arg(long = "mailbox")]
        mailboxes: Vec<String>,
        /// Keep following: sync every `imap.poll_interval_ms` until interrupted (Ctrl-C); a
        /// server that cannot be reached is retried with backoff.
        #[arg(long)]
        follow: bool,
        /// Serve the follower's Prometheus metrics (`GET /metrics`: server up, syncs by
        /// outcome, published, backoff) on this address.
        #[arg(long)]
        metrics_listen: Option<String>,
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
    match source {
        IngestSource::Docs {
            dir,
            tenant,
            watch,
            interval_ms,
        } => {
            let mut first = true;
            // What this watch already reported: dead letters, versions the producer refused.
            let mut reported = WatchMemory::default();
            loop {
                let changed =
                    ingest_docs(config, &dir, &tenant, first || !watch, &mut reported).await?;
                first = false;
                if !watch {
                    return Ok(());
                }
                if changed {
                    tracing::info!(dir = %dir.display(), "published changes");
                }
                tokio::select! {
                    _ = tokio::time::sleep(std::time::Duration::from_millis(interval_ms)) => {}
                    _ = tokio::signal::ctrl_c() => return Ok(()),
                }
            }
        }
        IngestSource::Slack { dir, tenant } => {
            let source = SlackExport {
                dir,
                config: config.slack.clone(),
            };
            publish_source(config, &tenant, &source).await
        }
        IngestSource::Mbox { path, tenant } => {
            let source = Mbox {
                path,
                config: config.mail.clone(),
            };
            publish_source(config, &tenant, &source).await
        }
        IngestSource::Eml { path, tenant } => {
            let source = Eml {
                path,
                config: config.mail.clone(),
            };
            publish_source(config, &tenant, &source).await
        }
        IngestSource::Maildir { path, tenant } => {
            let source = Maildir {
                path,
                config: config.mail.clone(),
            };
            publish_source(config, &tenant, &source).await
        }
        IngestSource::Ics {
            path,
            tenant,
            window_start,
            window_end,
        } => {
            let mut ics = config.ics.clone();
            ics.window_start = window_start.or(ics.window_start);
            ics.window_end = window_end.or(ics.window_end);
            let now = epigraph_schemas::now_millis();
            let source = IcsFile {
                path,
                config: ics,
                now,
            };
            publish_source(config, &tenant, &source).await
        }
        IngestSource::Caldav {
            url,
            tenant,
            follow,
            window_start,
            window_end,
            metrics_listen,
        } => {
            let mut ics = config.ics.clone();
            ics.window_start = window_start.or(ics.window_start);
            ics.window_end = window_end.or(ics.window_end);
            let listen = metrics_listen.as_deref();
            super::caldav::follow_calendar(config, &ics, &url, &tenant, follow, listen).await
        }
        IngestSource::Topic {
            name,
            follow,
            metrics_listen,
        } => super::topic::follow_topic(config, &name, follow, metrics_listen.as_deref()).await,
        IngestSource::Imap {
            tenant,
            mailboxes,
            follow,
            metrics_listen,
        } => {
            let mut imap = config.imap.clone();
            if !mailboxes.is_empty() {
                imap.mailboxes = mailboxes;
            }
            let listen = metrics_listen.as_deref();
            super::imap::follow_mailboxes(config, &imap, &tenant, follow, listen).await
        }
        IngestSource::Events { file, tenant } => {
            super::events::ingest_events(config, &file, &tenant).await
        }
        IngestSource::Beir { dir, tenant } => {
            publish_source(config, &tenant, &BeirCorpus { path: dir }).await
        }
    }
}

/// Read a one-pass source and publish it ([`publish_scan`]).
async fn publish_source(config: &EpigraphConfig, tenant: &str, source: &impl Source) -> Result<()> {
    let scan = source.scan(tenant, config.kafka.dead_letter_max_bytes)?;
    publish_scan(config, source.name(), source.input(), tenant, scan).await
}

/// Publish a connector's scan and print the JSON summary. Items whose version was already
/// published from the same input (a manifest per source, tenant and path in the state folder,
/// saved once every event is acknowledged) are counted `unchanged` and not republished.
async fn publish_scan(
    config: &EpigraphConfig,
    source: &str,
    input: &Path,
    tenant: &str,
    scan: Scan,
) -> Result<()> {
    let state_dir = config.state_dir();
    let input = input.canonicalize().unwrap_or_else(|_| input.to_path_buf());
    let key = PathBuf::from(format!("{source}:{}", input.display()));
    let mut manifest = Manifest::load(&state_dir, tenant, &key)?;
    let previous = manifest.clone();
    let (fresh, unchanged): (Vec<_>, Vec<_>) = scan
        .events
        .into_iter()
        .partition(|e| manifest.files.get(&e.source_id) != Some(&e.version));
    for event in &fresh {
        // Tombstones are remembered too (their version is `deleted`).
        manifest
            .files
            .insert(event.source_id.clone(), event.version.clone());
    }
    let dead = scan.dead_letters.len();
    let report = publish(
        config,
        Scan {
            events: fresh,
            dead_letters: scan.dead_letters,
        },
    )
    .await?;
    // What the producer dead-lettered was not published: the next read sends it again.
    for refused in &report.refused {
        manifest.forget(refused, &previous);
    }
    manifest.save(&state_dir)?;
    let summary = serde_json::json!({
        "source": source,
        "tenant": tenant,
        "published": report.published,
        "unchanged": unchanged.len(),
        "dead_lettered": dead + report.dead_lettered,
    });
    println!("{summary}");
    Ok(())
}

/// What a watch of the documents folder already reported, so a poll does not repeat it.
#[derive(Default)]
struct WatchMemory {
    /// `(location, raw)` of every dead letter sent: a bad file is reported once, until it
    /// changes.
    dead_letters: std::collections::HashSet<(String, String)>,
    /// `(source id, version)` of every event the producer refused (too large for the topic):
    /// not sent again during this watch; the next run tries again.
    refused: std::collections::HashSet<(String, String)>,
}

/// One pass over the folder; prints the summary when `always_report` or something changed, and
/// returns whether something was published.
async fn ingest_docs(
    config: &EpigraphConfig,
    dir: &Path,
    tenant: &str,
    always_report: bool,
    reported: &mut WatchMemory,
) -> Result<bool> {
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
    let dead_letters: Vec<_> = scan
        .dead_letters
        .into_iter()
        .filter(|l| {
            reported
                .dead_letters
                .insert((l.location.clone(), l.raw_base64.clone()))
        })
        .collect();
    let dead = dead_letters.len();
    let (unchanged, mut manifest) = (scan.unchanged, scan.next_manifest);
    // A version the producer already refused during this watch is not sent (and dead-lettered)
    // again at every poll; it stays unrecorded, so the next run sends it.
    let (held, events): (Vec<_>, Vec<_>) = scan.events.into_iter().partition(|e| {
        reported
            .refused
            .contains(&(e.source_id.clone(), e.version.clone()))
    });
    for event in &held {
        manifest.forget(&event.source_id, &previous);
    }
    let versions: std::collections::HashMap<String, String> = events
        .iter()
        .map(|e| (e.source_id.clone(), e.version.clone()))
        .collect();
    let report = publish(
        config,
        Scan {
            events,
            dead_letters,
        },
    )
    .await?;
    // What the producer dead-lettered (too large for the topic, …) was not published: the next
    // scan sends it again.
    for refused in &report.refused {
        manifest.forget(refused, &previous);
        if let Some(version) = versions.get(refused) {
            reported.refused.insert((refused.clone(), version.clone()));
        }
    }
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
    let changed = report.published > 0 || dead + report.dead_lettered > 0;
    if always_report || changed {
        println!("{summary}");
    }
    Ok(changed)
}
