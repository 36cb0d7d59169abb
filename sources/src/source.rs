//! What every one-pass source is: a named reader of one input (a file or folder) that yields a
//! [`Scan`] — events for Kafka and dead letters with their reasons.
//!
//! The export readers (Slack, mbox, `.eml`, maildir, iCalendar, BEIR) implement [`Source`], so
//! the CLI publishes each of them the same way (one manifest per source, tenant and input; one
//! summary line) and a new export format is a folder with its config, its reader and an `impl
//! Source` — plus one line of the CLI that names it. The documents source (`docs`) reads against
//! its manifest to tombstone removed files and the followers (`caldav`, `imap`, `topic`) keep
//! state between syncs, so they have their own loops.

use std::path::{Path, PathBuf};

use crate::error::SourceError;
use crate::ics::IcsConfig;
use crate::mail::MailConfig;
use crate::scan::Scan;
use crate::slack::SlackConfig;

/// A source read in one pass.
///
/// ```
/// use epigraph_sources::source::{Mbox, Source};
/// let dir = std::env::temp_dir().join(format!("epigraph-source-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("one.mbox");
/// std::fs::write(&path, "From a@x Mon Jan  1 00:00:00 2024\nFrom: A <a@x>\nSubject: Hi\nMessage-ID: <1@x>\nDate: Mon, 1 Jan 2024 00:00:00 +0000\n\nHello.\n").unwrap();
/// let mbox = Mbox { path, config: Default::default() };
/// assert_eq!(mbox.name(), "mbox");
/// let scan = mbox.scan("acme", 1024).unwrap();
/// assert_eq!(scan.events.len(), 1);
/// assert!(scan.dead_letters.is_empty());
/// ```
pub trait Source {
    /// Its name in summaries, manifests and dead letters (`slack`, `mbox`, …).
    fn name(&self) -> &'static str;
    /// What it reads: a file or a folder.
    fn input(&self) -> &Path;
    /// Read it all for `tenant`: well-formed items as events, the others as dead letters
    /// (their raw bytes capped at `max_dead_letter_bytes`). An error is the input's fault
    /// (missing, unreadable) or a bad tenant, never one bad item.
    fn scan(&self, tenant: &str, max_dead_letter_bytes: usize) -> Result<Scan, SourceError>;
}

/// An unzipped Slack workspace export.
#[derive(Clone, Debug)]
pub struct SlackExport {
    /// The export's folder.
    pub dir: PathBuf,
    /// `[slack]`.
    pub config: SlackConfig,
}

impl Source for SlackExport {
    fn name(&self) -> &'static str {
        "slack"
    }
    fn input(&self) -> &Path {
        &self.dir
    }
    fn scan(&self, tenant: &str, max: usize) -> Result<Scan, SourceError> {
        crate::slack::read_slack_export(&self.dir, tenant, &self.config, max)
    }
}

/// An mbox file.
#[derive(Clone, Debug)]
pub struct Mbox {
    /// The file.
    pub path: PathBuf,
    /// `[mail]`.
    pub config: MailConfig,
}

impl Source for Mbox {
    fn name(&self) -> &'static str {
        "mbox"
    }
    fn input(&self) -> &Path {
        &self.path
    }
    fn scan(&self, tenant: &str, max: usize) -> Result<Scan, SourceError> {
        crate::mail::read_mbox(&self.path, tenant, &self.config, max)
    }
}

/// One `.eml` file.
#[derive(Clone, Debug)]
pub struct Eml {
    /// The file.
    pub path: PathBuf,
    /// `[mail]`.
    pub config: MailConfig,
}

impl Source for Eml {
    fn name(&self) -> &'static str {
        "eml"
    }
    fn input(&self) -> &Path {
        &self.path
    }
    fn scan(&self, tenant: &str, max: usize) -> Result<Scan, SourceError> {
        crate::mail::read_eml(&self.path, tenant, &self.config, max)
    }
}

/// A maildir (its `cur/` and `new/`).
#[derive(Clone, Debug)]
pub struct Maildir {
    /// The maildir's folder.
    pub path: PathBuf,
    /// `[mail]`.
    pub config: MailConfig,
}

impl Source for Maildir {
    fn name(&self) -> &'static str {
        "maildir"
    }
    fn input(&self) -> &Path {
        &self.path
    }
    fn scan(&self, tenant: &str, max: usize) -> Result<Scan, SourceError> {
        crate::mail::read_maildir(&self.path, tenant, &self.config, max)
    }
}

/// An iCalendar file, its recurrences expanded in the window around `now`.
#[derive(Clone, Debug)]
pub struct IcsFile {
    /// The `.ics` file.
    pub path: PathBuf,
    /// `[ics]` (the expansion window).
    pub config: IcsConfig,
    /// The instant the window is relative to (ms since the Unix epoch).
    pub now: i64,
}

impl Source for IcsFile {
    fn name(&self) -> &'static str {
        "ics"
    }
    fn input(&self) -> &Path {
        &self.path
    }
    fn scan(&self, tenant: &str, max: usize) -> Result<Scan, SourceError> {
        crate::ics::read_ics(&self.path, tenant, &self.config, max, self.now)
    }
}

/// A BEIR corpus (`corpus.jsonl`, or the folder holding it).
#[derive(Clone, Debug)]
pub struct BeirCorpus {
    /// The folder or the file.
    pub path: PathBuf,
}

impl Source for BeirCorpus {
    fn name(&self) -> &'static str {
        "beir"
    }
    fn input(&self) -> &Path {
        &self.path
    }
    fn scan(&self, tenant: &str, max: usize) -> Result<Scan, SourceError> {
        crate::beir::read_corpus(&self.path, tenant, max)
    }
}
