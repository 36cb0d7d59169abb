use std::path::Path;
use std::time::UNIX_EPOCH;

use epigraph_schemas::{SourceEvent, SourceKind};
use walkdir::WalkDir;

use sha2::{Digest, Sha256};
use similar::{Algorithm, DiffOp, capture_diff_slices};

use super::{DocsConfig, LineStamp, Manifest};
use crate::SourceError;
use crate::formats::{DocumentText, Format, read_text};
use crate::kafka::DeadLetter;

/// What a scan of a folder found, against the previous manifest.
#[derive(Debug, Default)]
pub struct DocsScan {
    /// New or changed files, and tombstones of removed ones.
    pub events: Vec<SourceEvent>,
    /// Files that could not be read as text.
    pub dead_letters: Vec<DeadLetter>,
    /// Files whose content did not change since the last publication.
    pub unchanged: usize,
    /// The manifest to save once `events` are acknowledged.
    pub next_manifest: Manifest,
}

/// Scan `root` for documents and diff them against `previous`.
///
/// ```
/// use epigraph_sources::docs::{DocsConfig, Manifest, scan_folder};
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("a.md"), "# Alpha\nWe ship in June.").unwrap();
/// let scan = scan_folder(dir.path(), "acme", &DocsConfig::default(), &Manifest::default(), 65536).unwrap();
/// assert_eq!(scan.events.len(), 1);
/// assert_eq!(scan.events[0].title.as_deref(), Some("Alpha"));
/// assert_eq!(scan.events[0].key(), "acme/a.md");
/// let again = scan_folder(dir.path(), "acme", &DocsConfig::default(), &scan.next_manifest, 65536).unwrap();
/// assert_eq!((again.events.len(), again.unchanged), (0, 1));
/// ```
pub fn scan_folder(
    root: &Path,
    tenant: &str,
    config: &DocsConfig,
    previous: &Manifest,
    dead_letter_max_bytes: usize,
) -> Result<DocsScan, SourceError> {
    crate::scan::check_tenant(tenant)?;
    let root = root.canonicalize().map_err(SourceError::io(root))?;
    let now = crate::now_millis();
    let mut scan = DocsScan {
        next_manifest: Manifest {
            tenant: tenant.to_string(),
            root: root.display().to_string(),
            ..Manifest::default()
        },
        ..DocsScan::default()
    };
    let walker = WalkDir::new(&root)
        .follow_links(config.follow_links)
        .sort_by_file_name();
    for entry in walker {
        let entry = entry.map_err(|e| {
            let path = e
                .path()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| root.clone());
            SourceError::io(path)(e.into())
        })?;
        if !entry.file_type().is_file() || !wanted(entry.path(), config) {
            continue;
        }
        let relative = entry
            .path()
            .strip_prefix(&root)
            .expect("walk stays under root");
        let source_id = relative.to_string_lossy().replace('\\', "/");
        let letter = |reason: String, raw: &[u8]| {
            DeadLetter::new(
                &reason,
                "docs",
                Some(tenant),
                &entry.path().display().to_string(),
                raw,
                dead_letter_max_bytes,
            )
        };
        let metadata = entry
            .metadata()
            .map_err(|e| SourceError::io(entry.path())(e.into()))?;
        if metadata.len() > config.max_file_bytes {
            let reason = format!(
                "file is {} bytes, over the {} byte limit",
                metadata.len(),
                config.max_file_bytes
            );
            scan.dead_letters.push(letter(reason, &[]));
            keep_previous(&mut scan.next_manifest, previous, &source_id);
            continue;
        }
        let bytes = std::fs::read(entry.path()).map_err(SourceError::io(entry.path()))?;
        let extension = relative
            .extension()
            .map(|e| e.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        let binary = Format::from_extension(&extension);
        let read = match binary {
            Some(format) => read_text(format, &bytes, &config.formats)
                .map(|document| Readable::from_document(document, format))
                .map_err(|e| e.to_string()),
            None => Readable::from_bytes(&bytes, &extension).map_err(|e| {
                format!(
                    "not UTF-8 text (invalid byte at offset {})",
                    e.valid_up_to()
                )
            }),
        };
        let readable = match read {
            Ok(readable) => readable,
            Err(reason) => {
                scan.dead_letters.push(letter(reason, &bytes));
                keep_previous(&mut scan.next_manifest, previous, &source_id);
                continue;
            }
        };
        let text = readable.text;
        let title = readable
            .title
            .or_else(|| match binary {
                None => title_of(&text),
                Some(format) => untitled_document_title(format, &text),
            })
            .or_else(|| {
                relative
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
            });
        let modified = metadata
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_millis() as i64);
        // A date the document declares ("Date: 12 October 2026") is when what it says was
        // written; the file's modification time is only when it was checked out or copied.
        // Else a date its title or file name gives ("# Launch sync — 2 September 2026",
        // `2026-09-02-launch-sync.md`): meeting notes are named by their day.
        let stem = relative.file_stem().map(|s| s.to_string_lossy());
        let declared = declared_date(&text)
            .map(|at| (at, "declared"))
            .or_else(|| named_date(title.as_deref(), stem.as_deref().unwrap_or(""), now));
        let stamps = line_stamps(
            previous.lines.get(&source_id).map(Vec::as_slice),
            &text,
            declared.map(|(at, _)| at).or(modified).unwrap_or(now),
        );
        let written = written_spans(&text, &stamps);
        let mut event =
            SourceEvent::upsert(tenant, SourceKind::Document, &source_id, title, text, now);
        event.occurred_at = declared.map(|(at, _)| at).or(modified);
        if let Some((_, how)) = declared {
            event.extras.insert("date".into(), how.into());
        }
        event.extras.insert("format".into(), extension);
        for (key, value) in readable.extras {
            event.extras.insert(key.into(), value);
        }
        event.extras.insert("path".into(), source_id.clone());
        if let Some(written) = written {
            event.extras.insert("written".into(), written);
        }
        scan.next_manifest.lines.insert(source_id.clone(), stamps);
        scan.next_manifest
            .files
            .insert(source_id.clone(), event.version.clone());
        if previous.files.get(&source_id) == Some(&event.version) {
            scan.unchanged += 1;
        } else {
            scan.events.push(event);
        }
    }
    for removed in previous
        .files
        .keys()
        .filter(|path| !scan.next_manifest.files.contains_key(*path))
    {
        scan.events.push(SourceEvent::tombstone(
            tenant,
            SourceKind::Document,
            removed,
            now,
        ));
    }
    Ok(scan)
}

/// A file's text, its declared title and what the event says about how it was read.
struct Readable {
    text: String,
    title: Option<String>,
    extras: Vec<(&'static str, String)>,
}

impl Readable {
    /// A text file (Markdown, plain text, HTML), which must be UTF-8.
    fn from_bytes(bytes: &[u8], extension: &str) -> Result<Readable, std::str::Utf8Error> {
        let text = std::str::from_utf8(bytes)?.to_string();
        Ok(if extension == "html" || extension == "htm" {
            Readable {
                title: html_title(&text),
                text: crate::html::html_to_text(&text),
                extras: Vec::new(),
            }
        } else {
            Readable {
                text,
                title: None,
                extras: Vec::new(),
            }
        })
    }

    /// A PDF or Office file read by [`crate::formats`]: `parts` (pages, slides, sheets) and
    /// `truncated` extras.
    fn from_document(document: DocumentText, format: Format) -> Readable {
        let mut extras = vec![
            ("media_type", format.media_type().to_string()),
            ("parts", document.parts.to_string()),
        ];
        if document.truncated {
            extras.push(("truncated", "true".into()));
        }
        Readable {
            text: document.text,
            title: document.title,
            extras,
        }
    }
}

/// The title of a PDF or Office file that declares none: a Word document's first heading, else
/// the first line of a PDF, Word document or presentation (a deck's first slide is its title
/// slide); none for a workbook, whose first line is a sheet name (the file name is used).
fn untitled_document_title(format: Format, text: &str) -> Option<String> {
    let first_line = || {
        let line = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with("## Slide "))?;
        Some(
            line.trim_start_matches('#')
                .trim()
                .chars()
                .take(120)
                .collect(),
        )
    };
    match format {
        Format::Docx => title_of(text).or_else(first_line),
        Format::Pdf | Format::Pptx => first_line(),
        Format::Xlsx => None,
    }
}

/// A file that became unreadable keeps its last good version: it is not tombstoned.
fn keep_previous(next: &mut Manifest, previous: &Manifest, source_id: &str) {
    if let Some(version) = previous.files.get(source_id) {
        next.files.insert(source_id.to_string(), version.clone());
    }
    if let Some(lines) = previous.lines.get(source_id) {
        next.lines.insert(source_id.to_string(), lines.clone());
    }
}

/// When each line of `text` was written: a line the previous version had, at the same place in
/// the diff of the two versions (Myers, over line hashes), keeps its time; any other line was
/// written `at`.
///
/// ```
/// use epigraph_sources::docs::{LineStamp, line_stamps};
/// let first = line_stamps(None, "# Plan\nWe ship in May.\nOwner: Maya.\n", 100);
/// assert!(first.iter().all(|LineStamp(_, at)| *at == 100));
/// let second = line_stamps(Some(&first), "# Plan\nWe ship in June.\nOwner: Maya.\nRisk: SSO.\n", 200);
/// let times: Vec<i64> = second.iter().map(|LineStamp(_, at)| *at).collect();
/// assert_eq!(times, [100, 200, 100, 200]);
/// ```
pub fn line_stamps(previous: Option<&[LineStamp]>, text: &str, at: i64) -> Vec<LineStamp> {
    let hashes: Vec<u64> = text.split_inclusive('\n').map(line_hash).collect();
    let mut stamps: Vec<LineStamp> = hashes.iter().map(|h| LineStamp(*h, at)).collect();
    if let Some(previous) = previous {
        let old: Vec<u64> = previous.iter().map(|LineStamp(h, _)| *h).collect();
        for op in capture_diff_slices(Algorithm::Myers, &old, &hashes) {
            if let DiffOp::Equal {
                old_index,
                new_index,
                len,
            } = op
            {
                for k in 0..len {
                    stamps[new_index + k].1 = previous[old_index + k].1;
                }
            }
        }
    }
    stamps
}

/// The `written` extra for `text` whose lines were written at `stamps` (from [`line_stamps`]):
/// `start-end@ms` character spans, consecutive lines of one time merged; `None` when every line
/// was written at once (the event's `occurred_at` says it all).
///
/// ```
/// use epigraph_sources::docs::{LineStamp, written_spans};
/// let text = "# Plan\nWe ship in June.\nOwner: Maya.\n";
/// let stamps = [LineStamp(1, 100), LineStamp(2, 200), LineStamp(3, 100)];
/// assert_eq!(written_spans(text, &stamps).as_deref(), Some("0-7@100;7-24@200;24-37@100"));
/// assert_eq!(written_spans(text, &[LineStamp(1, 5), LineStamp(2, 5), LineStamp(3, 5)]), None);
/// ```
pub fn written_spans(text: &str, stamps: &[LineStamp]) -> Option<String> {
    let first = stamps.first()?.1;
    if stamps.iter().all(|LineStamp(_, at)| *at == first) {
        return None;
    }
    let mut spans: Vec<(usize, usize, i64)> = Vec::new();
    let mut chars = 0;
    for (line, LineStamp(_, at)) in text.split_inclusive('\n').zip(stamps) {
        let end = chars + line.chars().count();
        match spans.last_mut() {
            Some(last) if last.2 == *at => last.1 = end,
            _ => spans.push((chars, end, *at)),
        }
        chars = end;
    }
    Some(
        spans
            .iter()
            .map(|(start, end, at)| format!("{start}-{end}@{at}"))
            .collect::<Vec<_>>()
            .join(";"),
    )
}

fn line_hash(line: &str) -> u64 {
    let digest = Sha256::digest(line.trim_end().as_bytes());
    u64::from_le_bytes(digest[..8].try_into().expect("eight bytes"))
}

fn wanted(path: &Path, config: &DocsConfig) -> bool {
    let hidden = path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with('.'));
    let extension = path.extension().map(|e| e.to_string_lossy().to_lowercase());
    !hidden && extension.is_some_and(|e| config.extensions.contains(&e))
}

/// The `<title>` of an HTML page, or its first `<h1>`, as text.
fn html_title(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    ["title", "h1"].iter().find_map(|tag| {
        let open = lower.find(&format!("<{tag}"))?;
        let start = open + lower[open..].find('>')? + 1;
        let end = start + lower[start..].find(&format!("</{tag}"))?;
        let text = crate::html::html_to_text(&html[start..end]);
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        (!text.is_empty()).then_some(text)
    })
}

/// Header keys that declare when a document was written, most telling first.
const DATE_KEYS: [&str; 7] = [
    "date",
    "last updated",
    "last-updated",
    "last modified",
    "last-modified",
    "created",
    "creation-date",
];

/// The date a document declares in a header line of its first 40 lines (`Date: 12 October
/// 2026`, `Last updated: 2026-06-18`, `Created: 3-Jan-2001`, `creation-date: 2020-03-02`), as
/// ms since the Unix epoch at midnight UTC; a `Date:` line wins over `Last updated:`, which
/// wins over `Created:`. Without such a line, an unindented line of its first 25 that is
/// nothing but a full date, as release notes and memos put one under their title
/// (`*December 7, 2021*`, `*May 17, 2010.*`).
///
/// ```
/// use epigraph_sources::docs::declared_date;
/// let day = |y, m, d| chrono::NaiveDate::from_ymd_opt(y, m, d).unwrap()
///     .and_hms_opt(0, 0, 0).unwrap().and_utc().timestamp_millis();
/// assert_eq!(declared_date("# Memo\n\nFrom: Omar\nDate: 7 October 2026\n"), Some(day(2026, 10, 7)));
/// assert_eq!(declared_date("Status: Accepted\nDate: 2026-06-18\n"), Some(day(2026, 6, 18)));
/// assert_eq!(declared_date("Created: 13-Jun-2000\nLast updated: March 3, 2021"), Some(day(2021, 3, 3)));
/// assert_eq!(declared_date("The date: to be decided."), None);
/// // Django's release notes: a date line under the title.
/// let notes = "========================\nDjango 4.0 release notes\n========================\n\n*December 7, 2021*\n\nWelcome to Django 4.0!";
/// assert_eq!(declared_date(notes), Some(day(2021, 12, 7)));
/// // A date inside a sentence, or further down, is not the document's.
/// assert_eq!(declared_date("# Plan\nWe ship on December 7, 2021.\n"), None);
/// // A version under which Pillow's notes start is no date (it read as 9 February of year 0).
/// assert_eq!(declared_date("9.2.0\n-----\n\nDeprecations\n============\n"), None);
/// ```
pub fn declared_date(text: &str) -> Option<i64> {
    let mut found: Vec<(usize, i64)> = text
        .lines()
        .take(40)
        .filter_map(|line| {
            let line = line.trim().trim_start_matches(['*', '-', '#', '>', ' ']);
            let (key, value) = line.split_once(':')?;
            let key = key.trim().trim_matches('*').trim().to_lowercase();
            let rank = DATE_KEYS.iter().position(|k| *k == key)?;
            Some((
                rank,
                parse_date(value.trim().trim_matches(['*', '"', '\'']))?,
            ))
        })
        .collect();
    found.sort();
    found.first().map(|(_, at)| *at).or_else(|| {
        text.lines()
            .take(25)
            .filter(|line| !line.starts_with(char::is_whitespace))
            .find_map(|line| parse_date(line.trim().trim_matches(['*', '_', ' ', '.'])))
    })
}

/// The day a document's title or file name gives, when it declares none in a header: a full
/// date in the title (`Launch sync — 2 September 2026`, `Retro (2026-09-02)`), else a
/// `YYYY-MM-DD` at the start of the file name (`2026-09-02-launch-sync`), with how it was
/// found (`"title"` or `"file name"`). A date after `now` is the day of something planned, not
/// of the writing, and is not taken.
///
/// ```
/// use epigraph_sources::docs::named_date;
/// let day = |y, m, d| chrono::NaiveDate::from_ymd_opt(y, m, d).unwrap()
///     .and_hms_opt(0, 0, 0).unwrap().and_utc().timestamp_millis();
/// let now = day(2026, 12, 5);
/// assert_eq!(named_date(Some("Launch sync — 2 September 2026"), "notes", now), Some((day(2026, 9, 2), "title")));
/// assert_eq!(named_date(Some("Board memo, October 7, 2026"), "memo", now), Some((day(2026, 10, 7), "title")));
/// assert_eq!(named_date(Some("Launch sync"), "2026-09-02-launch-sync", now), Some((day(2026, 9, 2), "file name")));
/// assert_eq!(named_date(Some("Q4 roadmap"), "q4-roadmap", now), None);
/// assert_eq!(named_date(Some("Release 1.2.3"), "release", now), None);
/// // The launch is planned, the plan was not written then.
/// assert_eq!(named_date(Some("Launch plan for 3 November 2027"), "launch", now), None);
/// ```
pub fn named_date(title: Option<&str>, file_stem: &str, now: i64) -> Option<(i64, &'static str)> {
    let in_title = title.and_then(|title| {
        let words: Vec<&str> = title
            .split_whitespace()
            .map(|w| w.trim_matches(['(', ')', '[', ']', ':', ';', '—', '–', '"', '\'']))
            .filter(|w| !w.is_empty())
            .collect();
        (0..words.len()).find_map(|i| {
            // One word (`2026-09-02`) or three (`2 September 2026`, `September 2, 2026`).
            [1, 3]
                .iter()
                .find_map(|&n| parse_date(&words.get(i..i + n)?.join(" ")))
        })
    });
    let in_name = || {
        let head: String = file_stem.chars().take(10).collect();
        let head = head.replace('_', "-");
        chrono::NaiveDate::parse_from_str(&head, "%Y-%m-%d")
            .ok()
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map(|d| d.and_utc().timestamp_millis())
    };
    // Not after now, and not before 1970 ("Release 1.2.3" reads as a day in the year 3).
    let past = |at: &i64| (0..=now).contains(at);
    in_title
        .filter(past)
        .map(|at| (at, "title"))
        .or_else(|| in_name().filter(past).map(|at| (at, "file name")))
}

/// A calendar date in one of the common written forms, with a year of four digits ("9.2.0", a
/// version, is not 9 February of year 0).
fn parse_date(value: &str) -> Option<i64> {
    const FORMATS: [&str; 8] = [
        "%Y-%m-%d",
        "%d %B %Y",
        "%d %b %Y",
        "%B %d, %Y",
        "%b %d, %Y",
        "%d-%b-%Y",
        "%Y/%m/%d",
        "%d.%m.%Y",
    ];
    // "2026-06-18T10:00:00Z" or "2026-06-18 (revised)": the leading date.
    let head: String = value.chars().take(40).collect();
    let candidates = [
        head.as_str(),
        head.split(['T', '(']).next().unwrap_or("").trim(),
        head.split_whitespace().next().unwrap_or(""),
    ];
    candidates.iter().find_map(|c| {
        FORMATS.iter().find_map(|f| {
            chrono::NaiveDate::parse_from_str(c.trim_end_matches(['.', ',']), f)
                .ok()
                .filter(|d| (1000..=9999).contains(&chrono::Datelike::year(d)))
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .map(|d| d.and_utc().timestamp_millis())
        })
    })
}

/// The first Markdown heading (`# Title`) or, for ADR-style files, a `Title:` header.
fn title_of(text: &str) -> Option<String> {
    text.lines().take(40).find_map(|line| {
        let line = line.trim();
        let heading = line
            .strip_prefix('#')
            .map(|rest| rest.trim_start_matches('#'));
        heading
            .or_else(|| line.strip_prefix("Title:"))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removed_files_become_tombstones_and_bad_bytes_dead_letters() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("keep.txt"), "kept").unwrap();
        std::fs::write(dir.path().join("gone.md"), "# Gone\nbye").unwrap();
        std::fs::write(dir.path().join("ignored.bin"), [0u8, 1, 2]).unwrap();
        let config = DocsConfig::default();
        let first = scan_folder(dir.path(), "t", &config, &Manifest::default(), 1024).unwrap();
        assert_eq!(first.events.len(), 2);
        std::fs::remove_file(dir.path().join("gone.md")).unwrap();
        std::fs::write(dir.path().join("latin1.txt"), [b'c', b'a', b'f', 0xE9]).unwrap();
        let second = scan_folder(dir.path(), "t", &config, &first.next_manifest, 1024).unwrap();
        assert_eq!(second.unchanged, 1);
        assert_eq!(second.events.len(), 1);
        assert_eq!(
            (second.events[0].op, second.events[0].source_id.as_str()),
            (epigraph_schemas::Op::Delete, "gone.md")
        );
        assert_eq!(second.dead_letters.len(), 1);
        assert!(
            second.dead_letters[0].reason.contains("not UTF-8"),
            "{}",
            second.dead_letters[0].reason
        );
        assert!(!second.next_manifest.files.contains_key("gone.md"));
    }

    fn touch(path: &Path, text: &str, at_ms: u64) {
        std::fs::write(path, text).unwrap();
        let at = UNIX_EPOCH + std::time::Duration::from_millis(at_ms);
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(at)
            .unwrap();
    }

    #[test]
    fn a_republished_file_says_when_each_kept_line_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plan.md");
        let (t1, t2, t3) = (1_780_000_000_000, 1_780_086_400_000, 1_780_172_800_000);
        touch(&path, "# Plan\n\nWe ship Atlas in May.\nOwner: Maya.\n", t1);
        let config = DocsConfig::default();
        let first = scan_folder(dir.path(), "t", &config, &Manifest::default(), 1024).unwrap();
        assert_eq!(first.events[0].extras.get("written"), None, "all new");
        touch(
            &path,
            "# Plan\n\nWe ship Atlas in June.\nOwner: Maya.\nRisk: SSO.\n",
            t2,
        );
        let second = scan_folder(dir.path(), "t", &config, &first.next_manifest, 1024).unwrap();
        // "# Plan\n\n" (8 characters) and "Owner: Maya.\n" were kept from t1.
        assert_eq!(
            second.events[0].extras.get("written").map(String::as_str),
            Some(format!("0-8@{t1};8-31@{t2};31-44@{t1};44-55@{t2}").as_str())
        );
        // The manifest survives a save and a load; a third edit keeps both earlier times.
        let state = tempfile::tempdir().unwrap();
        second.next_manifest.save(state.path()).unwrap();
        let root = dir.path().canonicalize().unwrap();
        let loaded = Manifest::load(state.path(), "t", &root).unwrap();
        assert_eq!(loaded, second.next_manifest);
        touch(
            &path,
            "# Plan\n\nWe ship Atlas in June.\nOwner: Tom.\nRisk: SSO.\n",
            t3,
        );
        let third = scan_folder(dir.path(), "t", &config, &loaded, 1024).unwrap();
        assert_eq!(
            third.events[0].extras.get("written").map(String::as_str),
            Some(format!("0-8@{t1};8-31@{t2};31-43@{t3};43-54@{t2}").as_str())
        );
    }

    #[test]
    fn meeting_notes_are_dated_by_the_day_their_title_or_file_name_gives() {
        let dir = tempfile::tempdir().unwrap();
        let day = |y, m, d| {
            chrono::NaiveDate::from_ymd_opt(y, m, d)
                .unwrap()
                .and_hms_opt(0, 0, 0)
                .unwrap()
                .and_utc()
                .timestamp_millis()
        };
        let files = [
            (
                "2026-09-02-launch-sync.md",
                "# Launch sync — 2 September 2026

- We ship.
",
            ),
            (
                "2026-09-09-sync.md",
                "# Weekly sync

- We ship later.
",
            ),
            (
                "memo.md",
                "# Memo, 3 September 2026

Date: 4 September 2026

Text.
",
            ),
            (
                "roadmap.md",
                "# Roadmap

We ship in Q4.
",
            ),
        ];
        for (name, text) in files {
            touch(&dir.path().join(name), text, 1_800_000_000_000);
        }
        let scan = scan_folder(
            dir.path(),
            "t",
            &DocsConfig::default(),
            &Manifest::default(),
            64,
        )
        .unwrap();
        let dated: std::collections::BTreeMap<&str, (Option<i64>, Option<&str>)> = scan
            .events
            .iter()
            .map(|e| {
                (
                    e.source_id.as_str(),
                    (e.occurred_at, e.extras.get("date").map(String::as_str)),
                )
            })
            .collect();
        assert_eq!(
            dated["2026-09-02-launch-sync.md"],
            (Some(day(2026, 9, 2)), Some("title"))
        );
        assert_eq!(
            dated["2026-09-09-sync.md"],
            (Some(day(2026, 9, 9)), Some("file name"))
        );
        // A `Date:` header wins over the title.
        assert_eq!(dated["memo.md"], (Some(day(2026, 9, 4)), Some("declared")));
        // Nothing names a day: the file's modification time.
        assert_eq!(dated["roadmap.md"], (Some(1_800_000_000_000), None));
    }

    #[test]
    fn invalid_tenant_is_a_config_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = scan_folder(
            dir.path(),
            "a/b",
            &DocsConfig::default(),
            &Manifest::default(),
            1,
        )
        .unwrap_err();
        assert!(matches!(err, SourceError::Config(_)));
    }

    #[test]
    fn pdf_and_office_files_are_read_as_text_and_unreadable_ones_dead_lettered() {
        let fixtures = epigraph_schemas::manifest_dir!().join("tests/fixtures/formats");
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "memo.pdf",
            "plan.docx",
            "review.pptx",
            "budget.xlsx",
            "scan.pdf",
        ] {
            std::fs::copy(fixtures.join(name), dir.path().join(name)).unwrap();
        }
        std::fs::write(dir.path().join("broken.docx"), b"PK\x03\x04 cut short").unwrap();
        let scan = scan_folder(
            dir.path(),
            "t",
            &DocsConfig::default(),
            &Manifest::default(),
            64,
        )
        .unwrap();
        let by_id = |id: &str| {
            scan.events
                .iter()
                .find(|e| e.source_id == id)
                .unwrap_or_else(|| panic!("no event {id}"))
        };
        let memo = by_id("memo.pdf");
        assert_eq!(memo.title.as_deref(), Some("Board memo: seed round"));
        assert!(memo.body.contains("EUR 2.3M valuation cap"));
        assert_eq!(memo.extras["format"], "pdf");
        assert_eq!(memo.extras["media_type"], "application/pdf");
        assert_eq!(memo.extras["parts"], "2");
        // The memo's own date line, not the file's modification time.
        assert_eq!(memo.extras["date"], "declared");
        assert_eq!(memo.occurred_at, Some(1_791_331_200_000));
        assert_eq!(
            by_id("plan.docx").title.as_deref(),
            Some("Launch plan for Vortex")
        );
        assert_eq!(by_id("review.pptx").extras["parts"], "2");
        assert!(by_id("budget.xlsx").body.contains("Sales | 120000 | TRUE"));
        assert_eq!(scan.events.len(), 4);
        let mut reasons: Vec<(&str, &str)> = scan
            .dead_letters
            .iter()
            .map(|l| (l.location.rsplit('/').next().unwrap(), l.reason.as_str()))
            .collect();
        reasons.sort();
        assert_eq!(reasons.len(), 2, "{reasons:?}");
        assert_eq!(reasons[0].0, "broken.docx");
        assert!(
            reasons[0]
                .1
                .starts_with("not a readable DOCX file: not a zip archive")
        );
        assert_eq!(reasons[1].0, "scan.pdf");
        assert!(reasons[1].1.contains("no text layer"));
        assert_eq!(scan.next_manifest.files.len(), 4);
    }
}
