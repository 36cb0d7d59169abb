//! The Slack source: a Slack workspace export (the `.zip` or its folder).
//!
//! An export is a folder with `users.json` and `channels.json` (and, depending on the plan and
//! the export type, `groups.json` for private channels, `mpims.json` for group direct messages,
//! `dms.json` for direct messages and `integration_logs.json`), plus one folder per channel
//! holding one `YYYY-MM-DD.json` file per day, each an array of messages. Direct-message
//! folders are named by conversation id, the others by channel name. `integration_logs.json`
//! records when integrations were added; it is not read.
//!
//! Each message becomes one `CHAT` [`SourceEvent`](epigraph_schemas::SourceEvent):
//! - `source_id` `slack/<channel>/<ts>` (Slack's `ts` is unique within a channel), title
//!   `#<channel>`, `occurred_at` from `ts`;
//! - the body is the message text with Slack's markup rendered for people: `<@U123>` becomes
//!   `@Display Name`, `<#C123|name>` becomes `#name`, `<https://x|label>` becomes
//!   `label (https://x)`, `&amp;`/`&lt;`/`&gt;` are unescaped; attachment text is appended
//!   (see [`SlackConfig::include_attachments`]);
//! - the author is the user from `users.json` (real name, else display name, else user name;
//!   address the profile e-mail, else the user id), a bot by `username`/`bot_id`; participants
//!   are the channel members; `thread_id` is `slack/<channel>/<thread_ts>` for thread replies
//!   and their parent;
//! - shared files become `file` links, URLs in the text `url` links; a shared PDF, Word,
//!   PowerPoint or Excel file that the export holds is also read as its own `DOCUMENT` event,
//!   `slack/<channel>/<ts>/file/<file id>`, linked `attached_to` its message
//!   ([`SlackConfig::include_files`]). Slack's own exports hold only the files' private URLs;
//!   tools that download the files (slackdump) keep them at `__uploads/<file id>/<name>`, at
//!   `<channel>/attachments/<file id>-<name>`, or rewrite `url_private` to a relative path: all
//!   three are looked for, never outside the export. An unreadable file is a dead letter;
//! - extras: `channel`, `channel_type`, `ts`, and when present `channel_id`, `user`,
//!   `subtype` (joins, leaves, topic changes are kept: they are membership facts), `edited_at`
//!   and `edited_by`, `mentions` (comma-separated user ids), `bot_id`, `inviter`.
//!
//! The version hashes everything published except the channel members, so an edit, a new file
//! or a changed subtype gives a new version while a membership change does not republish the
//! channel's history.
//!
//! Bad input never stops a read: a day file that cannot be read or is not a JSON array, and a
//! message that is not an object or has no valid `ts`, become dead letters (stage `slack`). A
//! missing `users.json` leaves authors named by user id.
//!
//! The export's `.zip` archive is read as is (unpacked into a temporary folder); so is the
//! folder it unzips to.
//!
//! ```
//! use epigraph_sources::slack::{SlackConfig, read_slack_export};
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("users.json"),
//!     r#"[{"id": "U1", "name": "ada", "real_name": "Ada Lovelace"}]"#).unwrap();
//! std::fs::write(dir.path().join("channels.json"),
//!     r#"[{"id": "C1", "name": "general", "members": ["U1"]}]"#).unwrap();
//! std::fs::create_dir(dir.path().join("general")).unwrap();
//! std::fs::write(dir.path().join("general/2024-05-01.json"),
//!     r#"[{"type": "message", "user": "U1", "text": "ship &amp; tell <@U1>", "ts": "1714550400.000100"}]"#).unwrap();
//! let scan = read_slack_export(dir.path(), "acme", &SlackConfig::default(), 65536).unwrap();
//! let event = &scan.events[0];
//! assert_eq!(event.source_id, "slack/general/1714550400.000100");
//! assert_eq!(event.body, "ship & tell @Ada Lovelace");
//! assert_eq!(event.authors[0].name.as_deref(), Some("Ada Lovelace"));
//! assert_eq!(event.occurred_at, Some(1_714_550_400_000));
//! assert!(scan.dead_letters.is_empty());
//! ```

mod config;
mod source;

#[cfg(test)]
mod tests;

pub use config::SlackConfig;
pub use source::read_slack_export;
