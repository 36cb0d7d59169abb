use std::path::Path;
use std::time::UNIX_EPOCH;

use epigraph_schemas::{SourceEvent, SourceKind};
use walkdir::WalkDir;

use super::{DocsConfig, Manifest};
use crate::ConnectorError;
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
/// use epigraph_connectors::docs::{DocsConfig, Manifest, scan_folder};
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
) -> Result<DocsScan, ConnectorError> {
    crate::scan::check_tenant(tenant)?;
    let root = root.canonicalize().map_err(ConnectorError::io(root))?;
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
            ConnectorError::io(path)(e.into())
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
            .map_err(|e| ConnectorError::io(entry.path())(e.into()))?;
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
        let bytes = std::fs::read(entry.path()).map_err(ConnectorError::io(entry.path()))?;
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => {
                let reason = format!(
                    "not UTF-8 text (invalid byte at offset {})",
                    e.utf8_error().valid_up_to()
                );
                scan.dead_letters.push(letter(reason, e.as_bytes()));
                keep_previous(&mut scan.next_manifest, previous, &source_id);
                continue;
            }
        };
        let is_html = relative
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm"));
        let (text, html_title) = if is_html {
            (crate::html::html_to_text(&text), html_title(&text))
        } else {
            (text, None)
        };
        let title = html_title.or_else(|| title_of(&text)).or_else(|| {
            relative
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
        });
        let mut event =
            SourceEvent::upsert(tenant, SourceKind::Document, &source_id, title, text, now);
        event.occurred_at = metadata
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_millis() as i64);
        let format = relative
            .extension()
            .map(|e| e.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        event.extras.insert("format".into(), format);
        event.extras.insert("path".into(), source_id.clone());
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

/// A file that became unreadable keeps its last good version: it is not tombstoned.
fn keep_previous(next: &mut Manifest, previous: &Manifest, source_id: &str) {
    if let Some(version) = previous.files.get(source_id) {
        next.files.insert(source_id.to_string(), version.clone());
    }
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
        assert!(matches!(err, ConnectorError::Config(_)));
    }
}
