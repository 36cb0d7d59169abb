//! What a source follower says of itself on `<prefix>.connectors`, so that whoever reads the
//! topic (the query service's health page) sees every connector of a tenant without knowing
//! where it runs.
//!
//! A follower (`epigraph ingest caldav|imap|topic`) publishes its [`ConnectorStatus`] (JSON) when
//! a sync succeeds or fails and at least every [`ConnectorStatus::report_every_ms`] while it
//! lives, and once more with `stopped` when it ends. The topic is compacted by
//! [`ConnectorStatus::key`]: the latest status per connector is what the topic keeps.

use serde::{Deserialize, Serialize};

/// One connector's state as it last reported it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectorStatus {
    /// The kind of connector: `caldav`, `imap`, `topic`.
    pub source: String,
    /// What it follows: the collection URL, `user@host/mailbox,…`, the `[[sources.topic]]`
    /// name. Never a credential.
    pub target: String,
    /// The tenant it publishes for.
    pub tenant: String,
    /// Whether it is following (`--follow`) or reading once.
    pub following: bool,
    /// Whether the last sync succeeded.
    pub up: bool,
    /// Whether the command has ended (a one-shot read done, Ctrl-C, or an error it cannot
    /// retry: then `last_error` says which).
    pub stopped: bool,
    /// When this report was written (ms since the Unix epoch).
    pub at: i64,
    /// When the process started following (ms).
    pub started_at: i64,
    /// When a sync last succeeded (ms), if one did.
    pub last_success: Option<i64>,
    /// While failing: how long until the next try (ms); 0 when up.
    pub retry_in_ms: u64,
    /// The longest a live follower stays silent: a reader that hears nothing for three times
    /// this long may take it for dead.
    pub report_every_ms: u64,
    /// Syncs that succeeded since the start.
    pub syncs_ok: u64,
    /// Syncs that failed since the start.
    pub syncs_failed: u64,
    /// Events published since the start (tombstones not counted).
    pub published: u64,
    /// Tombstones published since the start.
    pub tombstoned: u64,
    /// Items dead-lettered since the start.
    pub dead_letters: u64,
    /// The error of the last failed sync (cleared by the next success), or why the command
    /// stopped.
    pub last_error: Option<String>,
}

impl ConnectorStatus {
    /// A status for a connector that has not synced yet.
    pub fn starting(source: &str, target: &str, tenant: &str, following: bool, now: i64) -> Self {
        ConnectorStatus {
            source: source.to_string(),
            target: target.to_string(),
            tenant: tenant.to_string(),
            following,
            up: false,
            stopped: false,
            at: now,
            started_at: now,
            last_success: None,
            retry_in_ms: 0,
            report_every_ms: 30_000,
            syncs_ok: 0,
            syncs_failed: 0,
            published: 0,
            tombstoned: 0,
            dead_letters: 0,
            last_error: None,
        }
    }

    /// The key on `<prefix>.connectors`: one record per tenant, connector kind and target.
    ///
    /// ```
    /// use epigraph_sources::kafka::ConnectorStatus;
    /// let status = ConnectorStatus::starting("topic", "crm-notes", "acme", true, 0);
    /// assert_eq!(status.key(), "acme/topic/crm-notes");
    /// ```
    pub fn key(&self) -> String {
        format!("{}/{}/{}", self.tenant, self.source, self.target)
    }

    /// What a reader should make of it at `now`: `stopped`, `silent` (alive by its last word
    /// but not heard from for three report intervals: killed, or cut off from Kafka),
    /// `failing` or `up`; `starting` before its first sync.
    ///
    /// ```
    /// use epigraph_sources::kafka::ConnectorStatus;
    /// let mut status = ConnectorStatus::starting("imap", "ana@mail/INBOX", "acme", true, 0);
    /// assert_eq!(status.state(1_000), "starting");
    /// status.up = true;
    /// assert_eq!(status.state(1_000), "up");
    /// assert_eq!(status.state(90_001), "silent");
    /// status.stopped = true;
    /// assert_eq!(status.state(90_001), "stopped");
    /// ```
    pub fn state(&self, now: i64) -> &'static str {
        let silent_after =
            i64::try_from(self.report_every_ms.saturating_mul(3)).unwrap_or(i64::MAX);
        if self.stopped {
            "stopped"
        } else if now.saturating_sub(self.at) > silent_after {
            "silent"
        } else if self.up {
            "up"
        } else if self.syncs_failed > 0 {
            "failing"
        } else {
            "starting"
        }
    }
}
