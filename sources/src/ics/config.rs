use serde::{Deserialize, Serialize};

/// How the iCalendar source reads `.ics` files.
///
/// ```toml
/// [ics]
/// window_days_before = 365
/// window_days_after = 365
/// # window_start = "1990-01-01"   # absolute bounds win over the relative ones
/// # window_end = "2030-12-31"
/// max_occurrences = 1000
/// max_file_bytes = 10485760
/// ```
///
/// ```
/// use epigraph_sources::ics::IcsConfig;
/// let config: IcsConfig = serde_json::from_str(r#"{"window_start": "1990-01-01"}"#).unwrap();
/// assert_eq!(config.max_occurrences, 1000);
/// assert!(serde_json::from_str::<IcsConfig>(r#"{"window": 3}"#).is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IcsConfig {
    /// Occurrences of a recurring event (RRULE, RDATE, minus EXDATE) are expanded from this
    /// many days before the read. Default 365.
    pub window_days_before: u32,
    /// … up to this many days after it. Default 365.
    pub window_days_after: u32,
    /// Absolute start of the expansion window (`YYYY-MM-DD`, UTC), instead of the relative one.
    /// Default none; example `"2026-01-01"` for a historical import.
    pub window_start: Option<String>,
    /// Absolute end of the expansion window (`YYYY-MM-DD`, UTC, exclusive). Default none.
    pub window_end: Option<String>,
    /// At most this many occurrences per series inside the window. Default 1000.
    pub max_occurrences: u16,
    /// Files larger than this many bytes are dead-lettered unread. Default 10 MiB.
    pub max_file_bytes: u64,
}

impl Default for IcsConfig {
    fn default() -> Self {
        IcsConfig {
            window_days_before: 365,
            window_days_after: 365,
            window_start: None,
            window_end: None,
            max_occurrences: 1000,
            max_file_bytes: 10 * 1024 * 1024,
        }
    }
}
