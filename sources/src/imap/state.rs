use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::SourceError;

/// What the IMAP source last published for one `(tenant, server, user)`: per followed mailbox
/// its UIDVALIDITY, UIDNEXT and, per UID, the event it yielded.
///
/// One file holds every mailbox of the account, so a message moved from one followed mailbox to
/// another is seen as a move (its source id stays live) and not as a delete. Written only after
/// the broker acknowledged the events, so a failed sync is fetched again.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImapState {
    /// Tenant the mail is published into.
    pub tenant: String,
    /// `host:port` of the server.
    pub server: String,
    /// The login name.
    pub username: String,
    /// Mailbox name → what was published from it.
    pub mailboxes: BTreeMap<String, MailboxState>,
}

/// One mailbox as last synced.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MailboxState {
    /// The mailbox's UIDVALIDITY: when the server changes it, every UID below is void.
    pub uid_validity: Option<u32>,
    /// The mailbox's UIDNEXT at the last sync (with the message count, tells that nothing
    /// changed without listing the UIDs).
    pub uid_next: Option<u32>,
    /// UID → what its message yielded.
    pub messages: BTreeMap<u32, PublishedMessage>,
}

/// What one message (one UID) yielded. A UID's content never changes in IMAP, so it is read once.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublishedMessage {
    /// Its source id (`mail/<Message-ID>`); none when it was dead-lettered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_id: Option<String>,
    /// The version published.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The source ids of its attachments published as documents (tombstoned with it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<String>,
    /// The producer refused (dead-lettered) its event or one of its attachments' (too large for
    /// the topic, …): not everything was published. It is read again on the next run of the
    /// command (not at every poll of the same follow, which would repeat the dead letter).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refused: bool,
    /// Read it again in this sync (set by [`ImapState::retry_refused`]; never saved).
    #[serde(skip)]
    pub retry: bool,
}

impl ImapState {
    /// Where the state of `(tenant, server, username)` lives under `state_dir`.
    pub fn path(state_dir: &Path, tenant: &str, server: &str, username: &str) -> PathBuf {
        let digest = Sha256::digest(format!("{tenant}\0{server}\0{username}").as_bytes());
        state_dir
            .join("imap")
            .join(format!("{}.json", hex::encode(&digest[..12])))
    }

    /// Load the state, or an empty one when this account was never synced.
    pub fn load(
        state_dir: &Path,
        tenant: &str,
        server: &str,
        username: &str,
    ) -> Result<Self, SourceError> {
        let path = Self::path(state_dir, tenant, server, username);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                SourceError::Config(format!("corrupt IMAP state {}: {e}", path.display()))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ImapState {
                tenant: tenant.to_string(),
                server: server.to_string(),
                username: username.to_string(),
                ..ImapState::default()
            }),
            Err(e) => Err(SourceError::io(path)(e)),
        }
    }

    /// Mark the messages whose event, or one of whose attachments' events, the producer refused
    /// (`PublishReport::refused`); returns how many were marked.
    ///
    /// ```
    /// use epigraph_sources::imap::{ImapState, PublishedMessage};
    /// let mut state = ImapState::default();
    /// let message = PublishedMessage {
    ///     source_id: Some("mail/a@x".into()),
    ///     attachments: vec!["mail/a@x/attachment/1".into()],
    ///     ..Default::default()
    /// };
    /// state.mailboxes.entry("INBOX".into()).or_default().messages.insert(1, message);
    /// assert_eq!(state.mark_refused(&["mail/a@x/attachment/1".to_string()]), 1);
    /// // On the next run it is read again.
    /// assert_eq!(state.retry_refused(), 1);
    /// assert!(state.mailboxes["INBOX"].messages[&1].retry);
    /// ```
    pub fn mark_refused(&mut self, refused: &[String]) -> usize {
        if refused.is_empty() {
            return 0;
        }
        let refused: std::collections::BTreeSet<&String> = refused.iter().collect();
        let mut marked = 0;
        for message in self
            .mailboxes
            .values_mut()
            .flat_map(|m| m.messages.values_mut())
        {
            let hit = message
                .source_id
                .iter()
                .chain(&message.attachments)
                .any(|id| refused.contains(id));
            if hit {
                message.refused = true;
                marked += 1;
            }
        }
        marked
    }

    /// Have the next sync read every refused message again (their mailboxes are listed even
    /// when their counters did not change); returns how many. Called on the first sync of a run.
    pub fn retry_refused(&mut self) -> usize {
        let mut retried = 0;
        for message in self
            .mailboxes
            .values_mut()
            .flat_map(|m| m.messages.values_mut())
        {
            if message.refused {
                message.retry = true;
                retried += 1;
            }
        }
        retried
    }

    /// Write the state atomically (temp file + rename).
    pub fn save(&self, state_dir: &Path) -> Result<(), SourceError> {
        let path = Self::path(state_dir, &self.tenant, &self.server, &self.username);
        let dir = path.parent().expect("state path has a parent");
        std::fs::create_dir_all(dir).map_err(SourceError::io(dir))?;
        let tmp = path.with_extension("json.tmp");
        let bytes = serde_json::to_vec(self).expect("the state serializes");
        std::fs::write(&tmp, bytes).map_err(SourceError::io(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(SourceError::io(&path))
    }
}
