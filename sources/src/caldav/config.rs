use serde::{Deserialize, Serialize};

/// How the CalDAV source follows a calendar collection on a server.
///
/// The calendar itself (recurrence window, file size limit) is read with the `[ics]` settings.
/// The password is never logged, printed or put in an error: prefer the environment
/// (`EPIGRAPH_CALDAV__PASSWORD`) to the file.
///
/// ```toml
/// [caldav]
/// username = "alice"
/// # password: set EPIGRAPH_CALDAV__PASSWORD instead of writing it here
/// poll_interval_ms = 30000
/// timeout_ms = 30000
/// max_backoff_ms = 300000
/// ```
///
/// ```
/// use epigraph_sources::caldav::CaldavConfig;
/// let config: CaldavConfig = serde_json::from_str(r#"{"username": "alice", "password": "s3cret"}"#).unwrap();
/// assert_eq!(config.poll_interval_ms, 30_000);
/// assert!(!format!("{config:?}").contains("s3cret"));
/// assert!(serde_json::from_str::<CaldavConfig>(r#"{"user": "alice"}"#).is_err());
/// ```
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CaldavConfig {
    /// HTTP Basic user name. Default none (no authentication).
    pub username: Option<String>,
    /// HTTP Basic password. Default none; set `EPIGRAPH_CALDAV__PASSWORD`.
    pub password: Option<String>,
    /// With `--follow`: how long to wait between two syncs, in ms. Default 30 s.
    pub poll_interval_ms: u64,
    /// Timeout of one HTTP request, in ms. Default 30 s.
    pub timeout_ms: u64,
    /// With `--follow`: a server that cannot be reached is retried after 1 s, doubling up to
    /// this many ms. Default 5 min.
    pub max_backoff_ms: u64,
}

impl Default for CaldavConfig {
    fn default() -> Self {
        CaldavConfig {
            username: None,
            password: None,
            poll_interval_ms: 30_000,
            timeout_ms: 30_000,
            max_backoff_ms: 300_000,
        }
    }
}

impl std::fmt::Debug for CaldavConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaldavConfig")
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("poll_interval_ms", &self.poll_interval_ms)
            .field("timeout_ms", &self.timeout_ms)
            .field("max_backoff_ms", &self.max_backoff_ms)
            .finish()
    }
}
