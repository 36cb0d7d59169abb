use serde::{Deserialize, Serialize};

/// How the IMAP source follows mailboxes on a mail server.
///
/// Messages are read with the `[mail]` settings (size limit, quote and signature stripping).
/// The password is never logged, printed or put in an error: prefer the environment
/// (`EPIGRAPH_IMAP__PASSWORD`) to the file.
///
/// ```toml
/// [imap]
/// host = "imap.example.org"
/// tls = "implicit"            # "implicit" (port 993), "starttls" or "none" (port 143)
/// username = "alice@example.org"
/// # password: set EPIGRAPH_IMAP__PASSWORD instead of writing it here
/// mailboxes = ["INBOX", "Archive"]
/// poll_interval_ms = 30000
/// ```
///
/// ```
/// use epigraph_sources::imap::{ImapConfig, ImapTls};
/// let config: ImapConfig = serde_json::from_str(
///     r#"{"host": "mail.example", "username": "alice", "password": "s3cret", "tls": "starttls"}"#,
/// ).unwrap();
/// assert_eq!(config.tls, ImapTls::Starttls);
/// assert_eq!(config.port(), 143);
/// assert_eq!(config.mailboxes, vec!["INBOX".to_string()]);
/// assert!(!format!("{config:?}").contains("s3cret"));
/// assert!(serde_json::from_str::<ImapConfig>(r#"{"user": "alice"}"#).is_err());
/// ```
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ImapConfig {
    /// The server's host name. Required by `epigraph ingest imap`.
    pub host: Option<String>,
    /// The server's port. Default 993 with `tls = "implicit"`, else 143.
    pub port: Option<u16>,
    /// How the connection is protected. Default `implicit` (TLS from the first byte); `starttls`
    /// upgrades a plain connection; `none` sends the password in clear (loopback only).
    pub tls: ImapTls,
    /// Login name. Required.
    pub username: Option<String>,
    /// Password. Default none; set `EPIGRAPH_IMAP__PASSWORD`.
    pub password: Option<String>,
    /// The mailboxes to follow. Default `["INBOX"]`; `--mailbox` on the command line replaces
    /// the list.
    pub mailboxes: Vec<String>,
    /// With `--follow`: how long to wait between two syncs, in ms. Default 30 s.
    pub poll_interval_ms: u64,
    /// Timeout of connecting and of one IMAP command, in ms. Default 30 s.
    pub timeout_ms: u64,
    /// With `--follow`: a server that cannot be reached is retried after 1 s, doubling up to
    /// this many ms. Default 5 min.
    pub max_backoff_ms: u64,
}

/// How an IMAP connection is protected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ImapTls {
    /// TLS from the first byte (IMAPS, port 993).
    #[default]
    Implicit,
    /// A plain connection upgraded with `STARTTLS` before logging in (port 143).
    Starttls,
    /// No TLS at all: only for a server on the loopback interface.
    None,
}

impl ImapConfig {
    /// The port to connect to: the configured one, else the usual one for [`ImapConfig::tls`].
    pub fn port(&self) -> u16 {
        self.port.unwrap_or(match self.tls {
            ImapTls::Implicit => 993,
            ImapTls::Starttls | ImapTls::None => 143,
        })
    }
}

impl Default for ImapConfig {
    fn default() -> Self {
        ImapConfig {
            host: None,
            port: None,
            tls: ImapTls::Implicit,
            username: None,
            password: None,
            mailboxes: vec!["INBOX".to_string()],
            poll_interval_ms: 30_000,
            timeout_ms: 30_000,
            max_backoff_ms: 300_000,
        }
    }
}

impl std::fmt::Debug for ImapConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImapConfig")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("tls", &self.tls)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("mailboxes", &self.mailboxes)
            .field("poll_interval_ms", &self.poll_interval_ms)
            .field("timeout_ms", &self.timeout_ms)
            .field("max_backoff_ms", &self.max_backoff_ms)
            .finish()
    }
}
