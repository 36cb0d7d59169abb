//! Readers of mail stores: mbox files, `.eml` files and maildir folders.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use walkdir::WalkDir;

use super::mbox::MboxEntries;
use super::{MailConfig, parse_message};
use crate::kafka::DeadLetter;
use crate::{Scan, SourceError};

/// Read every message of an mbox file.
///
/// Each message becomes one `EMAIL` event; a message that cannot be parsed (truncated, not an
/// e-mail, over the size limit) becomes a dead letter located at `<path>@<byte offset> (message
/// <n>)` with its bytes, and the rest of the file is read on.
///
/// ```
/// use epigraph_sources::mail::{MailConfig, read_mbox};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("inbox.mbox");
/// std::fs::write(&path, "From a@example.org Tue Jun  3 09:00:00 2025\n\
///     Message-ID: <m1@example.org>\nFrom: a@example.org\nSubject: Hello\n\nHi.\n\n\
///     From b@example.org Tue Jun  3 10:00:00 2025\nnot a header\n").unwrap();
/// let scan = read_mbox(&path, "acme", &MailConfig::default(), 4096).unwrap();
/// assert_eq!(scan.events.len(), 1);
/// assert_eq!(scan.events[0].source_id, "mail/m1@example.org");
/// assert_eq!(scan.dead_letters.len(), 1);
/// assert!(scan.dead_letters[0].location.ends_with("(message 2)"));
/// ```
pub fn read_mbox(
    path: &Path,
    tenant: &str,
    config: &MailConfig,
    dead_letter_max_bytes: usize,
) -> Result<Scan, SourceError> {
    crate::scan::check_tenant(tenant)?;
    let file = File::open(path).map_err(SourceError::io(path))?;
    let intake = Intake::new(tenant, config, dead_letter_max_bytes, path);
    let cap = usize::try_from(config.max_message_bytes).unwrap_or(usize::MAX);
    let mut scan = Scan::default();
    for entry in MboxEntries::new(BufReader::new(file), cap) {
        let entry = entry.map_err(SourceError::io(path))?;
        if entry.preamble {
            if !entry.raw.iter().all(u8::is_ascii_whitespace) {
                let location = format!("{}@0 (before the first message)", path.display());
                let reason = "text before the first \"From \" line: not a message of an mbox file";
                intake.reject(reason, &location, &entry.raw, &mut scan);
            }
            continue;
        }
        let location = format!(
            "{}@{} (message {})",
            path.display(),
            entry.offset,
            entry.index
        );
        if entry.size > config.max_message_bytes {
            intake.reject(
                &too_large(entry.size, config),
                &location,
                &entry.raw,
                &mut scan,
            );
            continue;
        }
        intake.read(&entry.raw, &location, &mut scan);
    }
    log("mbox", path, &scan);
    Ok(scan)
}

/// Read one `.eml` file, or every `.eml` file under a folder (recursively, in name order).
///
/// ```
/// use epigraph_sources::mail::{MailConfig, read_eml};
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("a.eml"), "From: a@example.org\nSubject: Hi\n\nHello.\n").unwrap();
/// std::fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
/// let scan = read_eml(dir.path(), "acme", &MailConfig::default(), 4096).unwrap();
/// assert_eq!(scan.events.len(), 1);
/// assert!(scan.events[0].source_id.starts_with("mail/sha256:"));
/// assert_eq!(scan.events[0].extras["mailbox"], "a.eml");
/// ```
pub fn read_eml(
    path: &Path,
    tenant: &str,
    config: &MailConfig,
    dead_letter_max_bytes: usize,
) -> Result<Scan, SourceError> {
    crate::scan::check_tenant(tenant)?;
    let metadata = std::fs::metadata(path).map_err(SourceError::io(path))?;
    let files = if metadata.is_dir() {
        eml_files(path)?
    } else {
        vec![path.to_path_buf()]
    };
    let mut intake = Intake::new(tenant, config, dead_letter_max_bytes, path);
    let mut scan = Scan::default();
    for file in &files {
        intake.mailbox = file_name(file);
        intake.read_file(file, &mut scan)?;
    }
    log("eml", path, &scan);
    Ok(scan)
}

/// Read the messages of a maildir: its `cur/` (seen) and `new/` (unseen) folders; `tmp/` holds
/// deliveries in progress and is skipped.
///
/// Events carry the `maildir_folder` (`cur` or `new`) and, when the file name has them, the
/// `maildir_flags` (`S` seen, `R` replied, `F` flagged, …) extras.
///
/// ```
/// use epigraph_sources::mail::{MailConfig, read_maildir};
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::create_dir(dir.path().join("new")).unwrap();
/// std::fs::write(dir.path().join("new").join("1.host"), "From: a@example.org\n\nHi.\n").unwrap();
/// let scan = read_maildir(dir.path(), "acme", &MailConfig::default(), 4096).unwrap();
/// assert_eq!(scan.events[0].extras["maildir_folder"], "new");
/// let empty = tempfile::tempdir().unwrap();
/// assert!(read_maildir(empty.path(), "acme", &MailConfig::default(), 4096).is_err());
/// ```
pub fn read_maildir(
    path: &Path,
    tenant: &str,
    config: &MailConfig,
    dead_letter_max_bytes: usize,
) -> Result<Scan, SourceError> {
    crate::scan::check_tenant(tenant)?;
    std::fs::metadata(path).map_err(SourceError::io(path))?;
    let folders: Vec<(&str, PathBuf)> = ["cur", "new"]
        .into_iter()
        .map(|name| (name, path.join(name)))
        .filter(|(_, folder)| folder.is_dir())
        .collect();
    if folders.is_empty() {
        return Err(SourceError::Config(format!(
            "{} is not a maildir: it has no cur/ or new/ folder",
            path.display()
        )));
    }
    let intake = Intake::new(tenant, config, dead_letter_max_bytes, path);
    let mut scan = Scan::default();
    for (name, folder) in folders {
        for file in sorted_files(&folder)? {
            let message_at = scan.events.len();
            if !intake.read_file(&file, &mut scan)? {
                continue;
            }
            // The message, not the events of its attachments that follow it.
            if let Some(event) = scan.events.get_mut(message_at) {
                event.extras.insert("maildir_folder".into(), name.into());
                if let Some(flags) = maildir_flags(&file) {
                    event.extras.insert("maildir_flags".into(), flags);
                }
            }
        }
    }
    log("maildir", path, &scan);
    Ok(scan)
}

/// What every reader shares: where events go, where failures go, and how they are labelled.
struct Intake<'a> {
    tenant: &'a str,
    config: &'a MailConfig,
    dead_letter_max_bytes: usize,
    /// File name of the mbox, `.eml` file or maildir folder: the `mailbox` extra.
    mailbox: String,
    now: i64,
}

impl<'a> Intake<'a> {
    fn new(
        tenant: &'a str,
        config: &'a MailConfig,
        dead_letter_max_bytes: usize,
        path: &Path,
    ) -> Self {
        Intake {
            tenant,
            config,
            dead_letter_max_bytes,
            mailbox: file_name(path),
            now: crate::now_millis(),
        }
    }

    /// Parse one message into an event or a dead letter; true when it became an event.
    fn read(&self, raw: &[u8], location: &str, scan: &mut Scan) -> bool {
        match parse_message(raw, self.config) {
            Ok(mail) => {
                let events = mail.into_events(self.tenant, &self.mailbox, self.now, self.config);
                scan.events.push(events.message);
                scan.events.extend(events.attachments);
                for (file, error) in events.unreadable {
                    let location = format!("{location} attachment {} ({})", file.index, file.name);
                    self.reject(&error.to_string(), &location, &file.bytes, scan);
                }
                true
            }
            Err(e) => {
                self.reject(&e.to_string(), location, raw, scan);
                false
            }
        }
    }

    /// Read a file holding one message; a file over the size limit is dead lettered unread
    /// (with its first bytes).
    fn read_file(&self, path: &Path, scan: &mut Scan) -> Result<bool, SourceError> {
        let location = path.display().to_string();
        let size = std::fs::metadata(path)
            .map_err(SourceError::io(path))?
            .len();
        if size > self.config.max_message_bytes {
            let mut head = Vec::new();
            File::open(path)
                .and_then(|file| {
                    file.take(self.dead_letter_max_bytes as u64)
                        .read_to_end(&mut head)
                })
                .map_err(SourceError::io(path))?;
            self.reject(&too_large(size, self.config), &location, &head, scan);
            return Ok(false);
        }
        let raw = std::fs::read(path).map_err(SourceError::io(path))?;
        Ok(self.read(&raw, &location, scan))
    }

    fn reject(&self, reason: &str, location: &str, raw: &[u8], scan: &mut Scan) {
        scan.dead_letters.push(DeadLetter::new(
            reason,
            "mail",
            Some(self.tenant),
            location,
            raw,
            self.dead_letter_max_bytes,
        ));
    }
}

fn log(store: &str, path: &Path, scan: &Scan) {
    tracing::debug!(
        store,
        path = %path.display(),
        events = scan.events.len(),
        dead_letters = scan.dead_letters.len(),
        "read mail store"
    );
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn too_large(size: u64, config: &MailConfig) -> String {
    super::MailError::TooLarge {
        size,
        limit: config.max_message_bytes,
    }
    .to_string()
}

/// `.eml` files under `root`, in name order, hidden files and folders skipped.
fn eml_files(root: &Path) -> Result<Vec<PathBuf>, SourceError> {
    let mut files = Vec::new();
    let walker = WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|entry| entry.depth() == 0 || !is_hidden(entry.path()));
    for entry in walker {
        let entry = entry.map_err(|e| {
            let path = e
                .path()
                .map_or_else(|| root.to_path_buf(), Path::to_path_buf);
            SourceError::io(path)(e.into())
        })?;
        let is_eml = entry
            .path()
            .extension()
            .is_some_and(|ext| ext.eq_ignore_ascii_case("eml"));
        if entry.file_type().is_file() && is_eml {
            files.push(entry.into_path());
        }
    }
    Ok(files)
}

/// The regular, non-hidden files of one maildir folder, in name order.
fn sorted_files(folder: &Path) -> Result<Vec<PathBuf>, SourceError> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(folder).map_err(SourceError::io(folder))? {
        let entry = entry.map_err(SourceError::io(folder))?;
        let path = entry.path();
        let is_file = entry.file_type().map_err(SourceError::io(&path))?.is_file();
        if is_file && !is_hidden(&path) {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

fn is_hidden(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|name| name.to_string_lossy().starts_with('.'))
}

/// The flags of a maildir file name: `1717400000.M1P1.host:2,RS` → `RS`.
fn maildir_flags(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_string_lossy().into_owned();
    let (_, flags) = name.rsplit_once(":2,")?;
    Some(flags.to_string()).filter(|f| !f.is_empty())
}
