//! Reading an unzipped Slack export folder into events and dead letters.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use epigraph_schemas::{Link, Party, SourceEvent, SourceKind};
use serde_json::{Map, Value};
use walkdir::WalkDir;

use super::SlackConfig;
use crate::formats::{Format, attached_document, read_text};
use crate::kafka::DeadLetter;
use crate::{Scan, SourceError};

/// The dead-letter stage of this source.
const STAGE: &str = "slack";

/// The files that list conversations, with the `channel_type` of what each lists.
const LISTINGS: [(&str, &str); 4] = [
    ("channels.json", "public"),
    ("groups.json", "private"),
    ("mpims.json", "mpim"),
    ("dms.json", "im"),
];

/// Read every message of the Slack export in `path` — the export's `.zip` archive or the folder
/// it unzips to — into `CHAT` events.
///
/// Events come sorted by channel name, then by message timestamp. Malformed day files and
/// messages become dead letters capped at `dead_letter_max_bytes` (inside an archive their
/// location is `export.zip!/channel/day.json`); an archive that cannot be opened is one dead
/// letter. See the [module documentation](super) for what each event holds.
///
/// # Errors
///
/// [`SourceError::Config`] for an invalid tenant or a path that is neither a folder nor a
/// `.zip`; [`SourceError::Io`] when the folder itself cannot be listed.
///
/// ```
/// use epigraph_sources::slack::{SlackConfig, read_slack_export};
/// let dir = tempfile::tempdir().unwrap();
/// let zip = dir.path().join("export.zip");
/// std::fs::write(&zip, b"not a zip").unwrap();
/// let scan = read_slack_export(&zip, "acme", &SlackConfig::default(), 1024).unwrap();
/// assert!(scan.events.is_empty());
/// assert!(scan.dead_letters[0].reason.contains("zip"));
/// ```
pub fn read_slack_export(
    path: &Path,
    tenant: &str,
    config: &SlackConfig,
    dead_letter_max_bytes: usize,
) -> Result<Scan, SourceError> {
    crate::scan::check_tenant(tenant)?;
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("zip"))
        && path.is_file()
    {
        return read_zip(path, tenant, config, dead_letter_max_bytes);
    }
    read_folder(path, tenant, config, dead_letter_max_bytes)
}

/// A zipped export: unpacked into a temporary folder (entries escaping it are skipped by the
/// `zip` crate), read, and the locations of its dead letters rewritten to `archive!/entry`.
fn read_zip(
    path: &Path,
    tenant: &str,
    config: &SlackConfig,
    dead_letter_max_bytes: usize,
) -> Result<Scan, SourceError> {
    let bytes = std::fs::read(path).map_err(SourceError::io(path))?;
    let unpacked = tempfile::tempdir().map_err(SourceError::io(path))?;
    let opened = zip::ZipArchive::new(std::io::Cursor::new(&bytes))
        .and_then(|mut archive| archive.extract(unpacked.path()));
    if let Err(e) = opened {
        let mut scan = Scan::default();
        scan.dead_letters.push(DeadLetter::new(
            &format!("not a readable .zip archive: {e}"),
            "slack",
            Some(tenant),
            &path.display().to_string(),
            &bytes,
            dead_letter_max_bytes,
        ));
        return Ok(scan);
    }
    // A zip made by hand may wrap the export in one top folder.
    let mut root = unpacked.path().to_path_buf();
    if !root.join("channels.json").exists() {
        let entries: Vec<_> = std::fs::read_dir(&root)
            .map_err(SourceError::io(&root))?
            .filter_map(Result::ok)
            .filter(|e| e.path().is_dir())
            .collect();
        if let [only] = entries.as_slice() {
            root = only.path();
        }
    }
    let mut scan = read_folder(&root, tenant, config, dead_letter_max_bytes)?;
    let prefix = root.canonicalize().unwrap_or(root).display().to_string();
    for letter in &mut scan.dead_letters {
        if let Some(rest) = letter.location.strip_prefix(&prefix) {
            letter.location = format!("{}!{rest}", path.display());
        }
    }
    Ok(scan)
}

/// An unzipped export folder.
fn read_folder(
    path: &Path,
    tenant: &str,
    config: &SlackConfig,
    dead_letter_max_bytes: usize,
) -> Result<Scan, SourceError> {
    let root = path.canonicalize().map_err(SourceError::io(path))?;
    if !root.is_dir() {
        return Err(SourceError::Config(format!(
            "{} is not a folder: expected an unzipped Slack export \
             (users.json, channels.json, one folder per channel)",
            path.display()
        )));
    }
    let mut reader = ExportReader {
        root,
        tenant,
        config,
        max_bytes: dead_letter_max_bytes,
        ingested_at: crate::now_millis(),
        directory: Directory::default(),
        dead_letters: Vec::new(),
    };
    reader.read_directory();
    let mut messages = Vec::new();
    let folders = reader.channel_folders()?;
    for (folder, name) in &folders {
        reader.read_channel(folder, name, &mut messages);
    }
    // Stable: two messages with one ts (a duplicated day file) keep their file order.
    messages.sort_by(|a, b| a.0.cmp(&b.0));
    tracing::debug!(
        channels = folders.len(),
        events = messages.len(),
        dead_letters = reader.dead_letters.len(),
        "read slack export"
    );
    Ok(Scan {
        events: messages.into_iter().map(|(_, event)| event).collect(),
        dead_letters: reader.dead_letters,
    })
}

/// Why a whole file of the export was dead lettered; the first field names the file.
#[derive(Debug, thiserror::Error)]
enum ExportFileError {
    #[error("{0} is {1} bytes, over the {2} byte limit (max_day_file_bytes)")]
    TooLarge(String, u64, u64),
    #[error("{0} could not be read: {1}")]
    Unreadable(String, #[source] std::io::Error),
    #[error("{0} is not valid JSON: {1}")]
    NotJson(String, #[source] serde_json::Error),
    #[error("{0} holds a JSON {1}, not an array")]
    NotAnArray(String, &'static str),
}

/// Why one item (a message, a user, a channel) of a file was dead lettered.
#[derive(Debug, thiserror::Error)]
enum ItemError {
    #[error("{what} is a JSON {found}, not an object")]
    NotAnObject {
        what: &'static str,
        found: &'static str,
    },
    #[error("{0} has no \"id\"")]
    NoId(&'static str),
    #[error("message has no \"ts\" (Slack timestamp)")]
    MissingTs,
    #[error("message \"ts\" is a JSON {0}, not a string")]
    TsNotAString(&'static str),
    #[error("message \"ts\" {0:?} is not a Slack timestamp (seconds.fraction)")]
    BadTs(String),
}

/// A Slack message timestamp (`"1452837318.000002"`): seconds, then a fraction that Slack
/// keeps unique within a channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Timestamp {
    secs: u64,
    nanos: u32,
}

impl Timestamp {
    /// Parse `seconds[.fraction]`: up to 12 digits of seconds and 9 of fraction.
    pub(super) fn parse(ts: &str) -> Option<Self> {
        let (secs, fraction) = ts.split_once('.').unwrap_or((ts, ""));
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if secs.is_empty() || secs.len() > 12 || fraction.len() > 9 {
            return None;
        }
        if !digits(secs) || !digits(fraction) {
            return None;
        }
        Some(Timestamp {
            secs: secs.parse().ok()?,
            nanos: format!("{fraction:0<9}").parse().ok()?,
        })
    }

    /// Milliseconds since the Unix epoch.
    pub(super) fn millis(self) -> i64 {
        // At most 12 digits of seconds: the product fits an i64.
        self.secs as i64 * 1000 + i64::from(self.nanos / 1_000_000)
    }
}

/// A conversation: a channel, private group, group DM or DM.
#[derive(Clone, Debug)]
struct Channel {
    name: String,
    id: Option<String>,
    kind: &'static str,
    members: Vec<String>,
}

/// People and conversations named by the export's listing files.
#[derive(Debug, Default)]
pub(super) struct Directory {
    /// User id → the party that represents them.
    pub(super) users: HashMap<String, Party>,
    /// Folder name → conversation.
    channels: HashMap<String, Channel>,
    /// Conversation id → name, for `<#C123>` references without a label.
    pub(super) channel_names: HashMap<String, String>,
}

impl Directory {
    /// The party for a user id; an unknown id stands for itself.
    fn party(&self, user_id: &str) -> Party {
        self.users.get(user_id).cloned().unwrap_or_else(|| Party {
            name: Some(user_id.to_string()),
            address: Some(user_id.to_string()),
        })
    }
}

/// A message as published, before it is hashed into a version.
struct MessageParts {
    body: String,
    authors: Vec<Party>,
    links: Vec<Link>,
    extras: BTreeMap<String, String>,
    thread_id: Option<String>,
}

/// Sort key of an event: channel name, then timestamp (the string breaks exact ties).
type SortKey = (String, Timestamp, String);

/// One read of one export.
struct ExportReader<'a> {
    root: PathBuf,
    tenant: &'a str,
    config: &'a SlackConfig,
    max_bytes: usize,
    ingested_at: i64,
    directory: Directory,
    dead_letters: Vec<DeadLetter>,
}

impl ExportReader<'_> {
    fn letter(&mut self, reason: &str, location: &str, raw: &[u8]) {
        self.dead_letters.push(DeadLetter::new(
            reason,
            STAGE,
            Some(self.tenant),
            location,
            raw,
            self.max_bytes,
        ));
    }

    /// `file` relative to the export, for reasons a user reads.
    fn shown(&self, file: &Path) -> String {
        file.strip_prefix(&self.root)
            .unwrap_or(file)
            .to_string_lossy()
            .replace('\\', "/")
    }

    /// Read a JSON array file; `None` when it is missing or dead lettered. Day files are held
    /// to `max_day_file_bytes`, listings are not.
    fn read_array(&mut self, file: &Path, what: &'static str) -> Option<Vec<Value>> {
        let shown = format!("{what} {}", self.shown(file));
        let limit = match what {
            "day file" => self.config.max_day_file_bytes,
            _ => u64::MAX,
        };
        match load_array(file, shown, limit) {
            Ok(items) => items,
            Err((error, raw)) => {
                self.letter(&error.to_string(), &file.display().to_string(), &raw);
                None
            }
        }
    }

    /// Dead letter item `index` of `file`.
    fn item_letter(&mut self, file: &Path, index: usize, error: &ItemError, item: &Value) {
        let reason = format!("{}#{index}: {error}", self.shown(file));
        let location = format!("{}#{index}", file.display());
        let raw = serde_json::to_vec(item).unwrap_or_default();
        self.letter(&reason, &location, &raw);
    }

    /// Read `users.json` and the conversation listings into the directory.
    fn read_directory(&mut self) {
        let users_file = self.root.join("users.json");
        match self.read_array(&users_file, "listing") {
            Some(users) => {
                for (index, user) in users.iter().enumerate() {
                    match user_party(user) {
                        Ok((id, party)) => {
                            self.directory.users.insert(id, party);
                        }
                        Err(error) => self.item_letter(&users_file, index, &error, user),
                    }
                }
            }
            None => tracing::warn!(
                file = %users_file.display(),
                "users.json is missing or unreadable: authors are named by user id"
            ),
        }
        for (file_name, kind) in LISTINGS {
            let file = self.root.join(file_name);
            let Some(entries) = self.read_array(&file, "listing") else {
                if kind == "public" {
                    tracing::warn!(
                        file = %file.display(),
                        "channels.json is missing or unreadable: channels have no members"
                    );
                }
                continue;
            };
            for (index, entry) in entries.iter().enumerate() {
                match channel_of(entry, kind) {
                    Ok((folder, channel)) => {
                        if let Some(id) = &channel.id {
                            let name = channel.name.clone();
                            self.directory.channel_names.insert(id.clone(), name);
                        }
                        self.directory.channels.insert(folder, channel);
                    }
                    Err(error) => self.item_letter(&file, index, &error, entry),
                }
            }
        }
    }

    /// The channel folders to read, sorted by name, with their names.
    fn channel_folders(&self) -> Result<Vec<(PathBuf, String)>, SourceError> {
        let walker = WalkDir::new(&self.root)
            .min_depth(1)
            .max_depth(1)
            .follow_links(self.config.follow_links)
            .sort_by_file_name();
        let mut folders = Vec::new();
        for entry in walker {
            let entry = entry.map_err(|e| {
                let path = e.path().unwrap_or(&self.root).to_path_buf();
                SourceError::io(path)(e.into())
            })?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let wanted = self.config.channels.is_empty() || self.config.channels.contains(&name);
            if entry.file_type().is_dir() && !name.starts_with('.') && wanted {
                folders.push((entry.into_path(), name));
            }
        }
        Ok(folders)
    }

    /// Read every day file of one channel folder.
    fn read_channel(&mut self, folder: &Path, name: &str, out: &mut Vec<(SortKey, SourceEvent)>) {
        let channel = match self.directory.channels.get(name) {
            Some(channel) => channel.clone(),
            None => {
                tracing::warn!(folder = %folder.display(), "channel folder not in any listing");
                Channel {
                    name: name.to_string(),
                    id: None,
                    kind: "unlisted",
                    members: Vec::new(),
                }
            }
        };
        let walker = WalkDir::new(folder)
            .min_depth(1)
            .max_depth(1)
            .follow_links(self.config.follow_links)
            .sort_by_file_name();
        for entry in walker {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    let location = e.path().unwrap_or(folder).display().to_string();
                    let reason = format!("could not list channel folder {name}: {e}");
                    self.letter(&reason, &location, &[]);
                    continue;
                }
            };
            let path = entry.path();
            let is_json = path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("json"));
            let hidden = entry.file_name().to_string_lossy().starts_with('.');
            if entry.file_type().is_file() && is_json && !hidden {
                self.read_day(path, &channel, out);
            }
        }
    }

    /// Read one `YYYY-MM-DD.json` file of a channel.
    fn read_day(&mut self, file: &Path, channel: &Channel, out: &mut Vec<(SortKey, SourceEvent)>) {
        let Some(messages) = self.read_array(file, "day file") else {
            return;
        };
        let folder = file.parent().unwrap_or(&self.root).to_path_buf();
        for (index, message) in messages.iter().enumerate() {
            match self.message_event(channel, message) {
                Ok(Some(entry)) => {
                    if self.config.include_files {
                        for (i, event) in self.shared_files(&folder, message, &entry.1) {
                            let (channel, stamp, ts) = &entry.0;
                            out.push(((channel.clone(), *stamp, format!("{ts}/file/{i}")), event));
                        }
                    }
                    out.push(entry);
                }
                Ok(None) => {}
                Err(error) => self.item_letter(file, index, &error, message),
            }
        }
    }

    /// The documents of the files `message` shared that the export holds (see
    /// [`ExportReader::local_file`]), in order, with their position; an unreadable one is a dead
    /// letter. Files the export does not hold stay `file` links of the message.
    fn shared_files(
        &mut self,
        folder: &Path,
        message: &Value,
        event: &SourceEvent,
    ) -> Vec<(usize, SourceEvent)> {
        let files = message.get("files").and_then(Value::as_array);
        let files = files.into_iter().flatten().chain(message.get("file"));
        let mut documents = Vec::new();
        for (i, file) in files.filter_map(Value::as_object).enumerate() {
            let name = str_field(file, "name").or_else(|| str_field(file, "title"));
            let Some(format) = Format::detect(name, str_field(file, "mimetype")) else {
                continue;
            };
            let Some(path) = self.local_file(folder, file) else {
                continue;
            };
            let name = name.unwrap_or("file");
            let id = str_field(file, "id").map_or_else(|| (i + 1).to_string(), str::to_string);
            let location = path.display().to_string();
            let shown = self.shown(&path);
            let size = std::fs::metadata(&path).map_or(0, |m| m.len());
            if size > self.config.max_file_bytes {
                let reason = format!(
                    "{shown}: {size} bytes, more than slack.max_file_bytes ({})",
                    self.config.max_file_bytes
                );
                self.letter(&reason, &location, &[]);
                continue;
            }
            let bytes = match std::fs::read(&path) {
                Ok(bytes) => bytes,
                Err(error) => {
                    self.letter(&format!("{shown}: {error}"), &location, &[]);
                    continue;
                }
            };
            match read_text(format, &bytes, &self.config.formats) {
                Ok(document) => {
                    let source_id = format!("{}/file/{id}", event.source_id);
                    let mut document =
                        attached_document(event, &source_id, name, format, &bytes, document);
                    document.extras.insert("file_id".into(), id);
                    documents.push((i, document));
                }
                Err(error) => self.letter(&format!("{shown}: {error}"), &location, &bytes),
            }
        }
        documents
    }

    /// Where the export holds a shared file, if it does: the path its `url_private_download` or
    /// `url_private` names when that is a relative path inside the export (tools that download
    /// the files rewrite the URLs so); `__uploads/<file id>/<name>` (slackdump's layout);
    /// `<channel folder>/attachments/<file id>-<name>`. Never outside the export.
    fn local_file(&self, folder: &Path, file: &Map<String, Value>) -> Option<PathBuf> {
        let inside = |relative: &str| {
            let relative = Path::new(relative);
            let plain = relative
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
            plain.then(|| self.root.join(relative))
        };
        let mut candidates = Vec::new();
        for key in ["url_private_download", "url_private"] {
            if let Some(url) = str_field(file, key)
                && !url.contains("://")
                && let Some(path) = inside(url)
            {
                candidates.push(path);
            }
        }
        if let (Some(id), Some(name)) = (str_field(file, "id"), str_field(file, "name"))
            && let (Some(upload), Some(attachment)) = (
                inside(&format!("__uploads/{id}/{name}")),
                inside(&format!("{id}-{name}")),
            )
        {
            candidates.push(upload);
            if let Ok(relative) = attachment.strip_prefix(&self.root) {
                candidates.push(folder.join("attachments").join(relative));
            }
        }
        candidates.into_iter().find(|path| path.is_file())
    }

    /// The event of one message; `None` for a subtype the configuration skips.
    fn message_event(
        &self,
        channel: &Channel,
        message: &Value,
    ) -> Result<Option<(SortKey, SourceEvent)>, ItemError> {
        let object = message.as_object().ok_or(ItemError::NotAnObject {
            what: "message",
            found: json_kind(message),
        })?;
        let ts = match object.get("ts") {
            None | Some(Value::Null) => return Err(ItemError::MissingTs),
            Some(Value::String(ts)) => ts.as_str(),
            Some(other) => return Err(ItemError::TsNotAString(json_kind(other))),
        };
        let stamp = Timestamp::parse(ts).ok_or_else(|| ItemError::BadTs(ts.to_string()))?;
        let subtype = str_field(object, "subtype");
        if subtype.is_some_and(|s| self.config.skip_subtypes.iter().any(|k| k == s)) {
            return Ok(None);
        }
        let mut rendered = Rendered::default();
        let text = object.get("text").and_then(Value::as_str).unwrap_or("");
        render_markup(text, &self.directory, &mut rendered);
        if self.config.include_attachments {
            append_attachments(object, &self.directory, &mut rendered);
        }
        let mut links = file_links(object);
        links.extend(rendered.urls.iter().map(|url| Link {
            rel: "url".to_string(),
            target: url.clone(),
            media_type: None,
            size_bytes: None,
        }));
        let parts = MessageParts {
            authors: self.authors_of(object, subtype),
            extras: extras_of(channel, object, ts, &rendered.mentions),
            thread_id: str_field(object, "thread_ts")
                .map(|thread| format!("slack/{}/{thread}", channel.name)),
            body: rendered.text,
            links,
        };
        let event = self.publish(channel, ts, stamp, parts);
        Ok(Some(((channel.name.clone(), stamp, ts.to_string()), event)))
    }

    /// Who wrote a message: a bot for `bot_message`, else the user, the file commenter or a bot.
    fn authors_of(&self, object: &Map<String, Value>, subtype: Option<&str>) -> Vec<Party> {
        let user = str_field(object, "user").map(|id| self.directory.party(id));
        let commenter = object
            .get("comment")
            .and_then(Value::as_object)
            .and_then(|comment| str_field(comment, "user"))
            .map(|id| self.directory.party(id));
        let author = if subtype == Some("bot_message") {
            bot_party(object).or(user)
        } else {
            user.or(commenter).or_else(|| bot_party(object))
        };
        author.into_iter().collect()
    }

    /// The event, with a version over everything published except the channel members.
    fn publish(
        &self,
        channel: &Channel,
        ts: &str,
        stamp: Timestamp,
        parts: MessageParts,
    ) -> SourceEvent {
        let source_id = format!("slack/{}/{ts}", channel.name);
        let title = format!("#{}", channel.name);
        let canonical = (
            &parts.extras,
            &parts.links,
            &parts.authors,
            &parts.thread_id,
        );
        // Serialising maps with string keys, strings and integers cannot fail.
        let canonical = serde_json::to_string(&canonical).unwrap_or_default();
        // `upsert` hashes title and body into the version and the version into the event id:
        // hashing the body followed by the canonical rest keeps both consistent.
        let hashed = format!("{}\0{canonical}", parts.body);
        let mut event = SourceEvent::upsert(
            self.tenant,
            SourceKind::Chat,
            &source_id,
            Some(title),
            hashed,
            self.ingested_at,
        );
        event.body = parts.body;
        event.occurred_at = Some(stamp.millis());
        event.authors = parts.authors;
        event.participants = channel
            .members
            .iter()
            .map(|id| self.directory.party(id))
            .collect();
        event.thread_id = parts.thread_id;
        event.links = parts.links;
        event.extras = parts.extras;
        event
    }
}

/// Load a file holding a JSON array: `Ok(None)` when it does not exist, else the items or why
/// not (with the bytes read, if any). `shown` names the file in reasons.
fn load_array(
    file: &Path,
    shown: String,
    limit: u64,
) -> Result<Option<Vec<Value>>, (ExportFileError, Vec<u8>)> {
    let size = match std::fs::metadata(file) {
        Ok(metadata) => metadata.len(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err((ExportFileError::Unreadable(shown, e), Vec::new())),
    };
    if size > limit {
        return Err((ExportFileError::TooLarge(shown, size, limit), Vec::new()));
    }
    let bytes = match std::fs::read(file) {
        Ok(bytes) => bytes,
        Err(e) => return Err((ExportFileError::Unreadable(shown, e), Vec::new())),
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Array(items)) => Ok(Some(items)),
        Ok(other) => Err((ExportFileError::NotAnArray(shown, json_kind(&other)), bytes)),
        Err(e) => Err((ExportFileError::NotJson(shown, e), bytes)),
    }
}

/// A non-empty string field.
fn str_field<'v>(object: &'v Map<String, Value>, key: &str) -> Option<&'v str> {
    object
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// The name of a JSON value's type, for reasons.
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A `users.json` entry: name is the real name, else the display name, else the user name;
/// address is the profile e-mail, else the user id.
fn user_party(user: &Value) -> Result<(String, Party), ItemError> {
    let user = user.as_object().ok_or(ItemError::NotAnObject {
        what: "user",
        found: json_kind(user),
    })?;
    let id = str_field(user, "id").ok_or(ItemError::NoId("user"))?;
    let profile = user.get("profile").and_then(Value::as_object);
    let from_profile = |key| profile.and_then(|p| str_field(p, key));
    let name = str_field(user, "real_name")
        .or_else(|| from_profile("real_name"))
        .or_else(|| from_profile("display_name"))
        .or_else(|| str_field(user, "name"))
        .unwrap_or(id);
    let address = from_profile("email").unwrap_or(id);
    let party = Party {
        name: Some(name.to_string()),
        address: Some(address.to_string()),
    };
    Ok((id.to_string(), party))
}

/// A listing entry and the folder that holds its messages (the id for DMs, else the name).
fn channel_of(entry: &Value, kind: &'static str) -> Result<(String, Channel), ItemError> {
    let object = entry.as_object().ok_or(ItemError::NotAnObject {
        what: "channel",
        found: json_kind(entry),
    })?;
    let id = str_field(object, "id");
    let name = if kind == "im" {
        id
    } else {
        str_field(object, "name").or(id)
    };
    let name = name.ok_or(ItemError::NoId("channel"))?;
    let members = object
        .get("members")
        .and_then(Value::as_array)
        .map(|m| m.iter().filter_map(Value::as_str).map(str::to_string))
        .into_iter()
        .flatten()
        .collect();
    let channel = Channel {
        name: name.to_string(),
        id: id.map(str::to_string),
        kind,
        members,
    };
    Ok((name.to_string(), channel))
}

/// A bot author: named by `username`, the bot profile or the bot id.
fn bot_party(object: &Map<String, Value>) -> Option<Party> {
    let username = str_field(object, "username");
    let bot_id = str_field(object, "bot_id");
    let profile_name = object
        .get("bot_profile")
        .and_then(Value::as_object)
        .and_then(|p| str_field(p, "name"));
    let name = username.or(profile_name).or(bot_id)?;
    Some(Party {
        name: Some(name.to_string()),
        address: Some(bot_id.unwrap_or(name).to_string()),
    })
}

/// `channel`, `channel_type`, `ts` and whichever of `channel_id`, `user`, `subtype`,
/// `bot_id`, `inviter`, `edited_at`, `edited_by`, `mentions` the message has.
fn extras_of(
    channel: &Channel,
    object: &Map<String, Value>,
    ts: &str,
    mentions: &[String],
) -> BTreeMap<String, String> {
    let mut extras = BTreeMap::new();
    extras.insert("channel".to_string(), channel.name.clone());
    extras.insert("channel_type".to_string(), channel.kind.to_string());
    extras.insert("ts".to_string(), ts.to_string());
    if let Some(id) = &channel.id {
        extras.insert("channel_id".to_string(), id.clone());
    }
    for key in ["user", "subtype", "bot_id", "inviter"] {
        if let Some(value) = str_field(object, key) {
            extras.insert(key.to_string(), value.to_string());
        }
    }
    if let Some(edited) = object.get("edited").and_then(Value::as_object) {
        let at = str_field(edited, "ts")
            .map(|t| Timestamp::parse(t).map_or_else(|| t.to_string(), |s| s.millis().to_string()));
        extras.insert(
            "edited_at".to_string(),
            at.unwrap_or_else(|| "unknown".to_string()),
        );
        if let Some(by) = str_field(edited, "user") {
            extras.insert("edited_by".to_string(), by.to_string());
        }
    }
    if !mentions.is_empty() {
        extras.insert("mentions".to_string(), mentions.join(","));
    }
    extras
}

/// One `file` link per shared file (`files` array, or the `file` object of older exports).
fn file_links(object: &Map<String, Value>) -> Vec<Link> {
    let files = object.get("files").and_then(Value::as_array);
    let files = files.into_iter().flatten().chain(object.get("file"));
    files
        .filter_map(Value::as_object)
        .filter_map(|file| {
            let target = str_field(file, "name")
                .or_else(|| str_field(file, "url_private"))
                .or_else(|| str_field(file, "id"))?;
            Some(Link {
                rel: "file".to_string(),
                target: target.to_string(),
                media_type: str_field(file, "mimetype").map(str::to_string),
                size_bytes: file.get("size").and_then(Value::as_i64),
            })
        })
        .collect()
}

/// Message text rendered for people, with what the markup referred to.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Rendered {
    /// Plain text.
    pub(super) text: String,
    /// User ids mentioned, in order of first mention.
    pub(super) mentions: Vec<String>,
    /// Web URLs linked, in order of first appearance.
    pub(super) urls: Vec<String>,
}

/// Append the pretext, title and text (or fallback) of each attachment, one per line.
fn append_attachments(object: &Map<String, Value>, directory: &Directory, out: &mut Rendered) {
    let attachments = object.get("attachments").and_then(Value::as_array);
    for attachment in attachments
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
    {
        let text = str_field(attachment, "text").or_else(|| str_field(attachment, "fallback"));
        let parts = [
            str_field(attachment, "pretext"),
            str_field(attachment, "title"),
            text,
        ];
        for part in parts.into_iter().flatten() {
            if !out.text.is_empty() {
                out.text.push('\n');
            }
            render_markup(part, directory, out);
        }
    }
}

/// Render Slack's markup in `raw` onto `out`: `<@U1>` → `@Name`, `<#C1|general>` → `#general`,
/// `<url|label>` → `label (url)`, `<url>` → `url`, `<!here>` → `@here`; `&amp;`, `&lt;` and
/// `&gt;` are unescaped. A `<` without a closing `>` is kept as written.
pub(super) fn render_markup(raw: &str, directory: &Directory, out: &mut Rendered) {
    let mut rest = raw;
    while let Some(open) = rest.find('<') {
        push_unescaped(&mut out.text, &rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('>') else {
            push_unescaped(&mut out.text, &rest[open..]);
            return;
        };
        render_reference(&after[..close], directory, out);
        rest = &after[close + 1..];
    }
    push_unescaped(&mut out.text, rest);
}

/// Render the inside of one `<…>`.
fn render_reference(inner: &str, directory: &Directory, out: &mut Rendered) {
    let (target, label) = match inner.split_once('|') {
        Some((target, label)) => (target, Some(label).filter(|l| !l.is_empty())),
        None => (inner, None),
    };
    let label = label.map(|l| {
        let mut text = String::new();
        push_unescaped(&mut text, l);
        text
    });
    if let Some(user) = target.strip_prefix('@').filter(|u| !u.is_empty()) {
        if !out.mentions.iter().any(|m| m == user) {
            out.mentions.push(user.to_string());
        }
        let known = directory.users.get(user).and_then(|p| p.name.clone());
        out.text.push('@');
        out.text
            .push_str(&known.or(label).unwrap_or_else(|| user.to_string()));
    } else if let Some(channel) = target.strip_prefix('#').filter(|c| !c.is_empty()) {
        let known = directory.channel_names.get(channel).cloned();
        out.text.push('#');
        out.text
            .push_str(&label.or(known).unwrap_or_else(|| channel.to_string()));
    } else if let Some(special) = target.strip_prefix('!') {
        let keyword = special.split('^').next().unwrap_or(special);
        out.text
            .push_str(&label.unwrap_or_else(|| format!("@{keyword}")));
    } else if target.is_empty() {
        out.text.push('<');
        push_unescaped(&mut out.text, inner);
        out.text.push('>');
    } else {
        let mut url = String::new();
        push_unescaped(&mut url, target);
        let web = url.starts_with("http://") || url.starts_with("https://");
        if web && !out.urls.contains(&url) {
            out.urls.push(url.clone());
        }
        match label.filter(|l| *l != url) {
            Some(label) => out.text.push_str(&format!("{label} ({url})")),
            None => out.text.push_str(&url),
        }
    }
}

/// Append `text` with Slack's three HTML escapes undone.
fn push_unescaped(out: &mut String, text: &str) {
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let tail = &rest[amp..];
        let (unescaped, len) = [("&amp;", '&'), ("&lt;", '<'), ("&gt;", '>')]
            .into_iter()
            .find(|(escape, _)| tail.starts_with(escape))
            .map_or(('&', 1), |(escape, c)| (c, escape.len()));
        out.push(unescaped);
        rest = &tail[len..];
    }
    out.push_str(rest);
}
