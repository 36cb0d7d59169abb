//! iCalendar DATE and DATE-TIME values (RFC 5545 §3.3.4, §3.3.5) with their `TZID`.

use chrono::{NaiveDate, NaiveDateTime, TimeZone, Utc};

/// A point in time as written in a calendar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// `19970714T173000Z`.
    Utc(NaiveDateTime),
    /// `TZID=Europe/Berlin:19970714T173000`, the zone known to the tz database.
    Zoned(NaiveDateTime, chrono_tz::Tz),
    /// `19970714T173000` without a zone (or with a zone we do not know): read as UTC.
    Floating(NaiveDateTime),
    /// `VALUE=DATE:19970714`: an all-day date, read as midnight UTC.
    Date(NaiveDate),
}

impl When {
    /// Milliseconds since the Unix epoch.
    ///
    /// ```
    /// use epigraph_sources::ics::time::parse_when;
    /// let (when, _) = parse_when("19970714T173000Z", None).unwrap();
    /// assert_eq!(when.millis(), 868_901_400_000);
    /// let (berlin, _) = parse_when("19970714T193000", Some("Europe/Berlin")).unwrap();
    /// assert_eq!(berlin.millis(), when.millis());
    /// ```
    pub fn millis(&self) -> i64 {
        match self {
            When::Utc(t) | When::Floating(t) => t.and_utc().timestamp_millis(),
            When::Zoned(t, tz) => tz
                .from_local_datetime(t)
                .earliest()
                .map(|d| d.timestamp_millis())
                // A local time inside a DST gap: read it as if the clock had not jumped.
                .unwrap_or_else(|| t.and_utc().timestamp_millis()),
            When::Date(d) => d
                .and_hms_opt(0, 0, 0)
                .map_or(0, |t| Utc.from_utc_datetime(&t).timestamp_millis()),
        }
    }

    /// Whether it is an all-day date.
    pub fn is_date(&self) -> bool {
        matches!(self, When::Date(_))
    }

    /// The value as an `rrule` content-line suffix: `;TZID=Europe/Berlin:19970714T193000`,
    /// `:19970714T173000Z`, `;VALUE=DATE:19970714`.
    pub fn rrule_value(&self) -> String {
        match self {
            When::Utc(t) | When::Floating(t) => format!(":{}Z", t.format("%Y%m%dT%H%M%S")),
            When::Zoned(t, tz) => format!(";TZID={}:{}", tz.name(), t.format("%Y%m%dT%H%M%S")),
            When::Date(d) => format!(":{}T000000Z", d.format("%Y%m%d")),
        }
    }
}

/// Parses one DATE or DATE-TIME value with the `TZID` parameter, if any. Returns the value and a
/// note when the zone is unknown (the time is then read as UTC).
///
/// ```
/// use epigraph_sources::ics::time::{When, parse_when};
/// assert!(matches!(parse_when("20260105", None).unwrap().0, When::Date(_)));
/// assert!(parse_when("INVALID-DATE", None).is_err());
/// let (_, note) = parse_when("20260105T090000", Some("Mars/Olympus")).unwrap();
/// assert!(note.unwrap().contains("Mars/Olympus"));
/// ```
pub fn parse_when(value: &str, tzid: Option<&str>) -> Result<(When, Option<String>), NotATime> {
    let value = value.trim();
    let bad = || NotATime(value.to_string());
    if value.len() == 8 {
        let date = NaiveDate::parse_from_str(value, "%Y%m%d").map_err(|_| bad())?;
        return Ok((When::Date(date), None));
    }
    let (text, utc) = match value.strip_suffix(['Z', 'z']) {
        Some(text) => (text, true),
        None => (value, false),
    };
    let time = NaiveDateTime::parse_from_str(text, "%Y%m%dT%H%M%S").map_err(|_| bad())?;
    if utc {
        return Ok((When::Utc(time), None));
    }
    match tzid {
        None => Ok((When::Floating(time), None)),
        Some(tzid) => match zone(tzid) {
            Some(tz) => Ok((When::Zoned(time, tz), None)),
            None => Ok((
                When::Floating(time),
                Some(format!(
                    "time zone {tzid:?} is not in the tz database; read as UTC"
                )),
            )),
        },
    }
}

/// A value that is neither an iCalendar DATE nor a DATE-TIME.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not an iCalendar DATE or DATE-TIME")]
pub struct NotATime(pub String);

/// A tz-database zone from a `TZID`, also when it is quoted or prefixed with a vendor path
/// (`/mozilla.org/20050126_1/America/New_York`).
///
/// ```
/// use epigraph_sources::ics::time::zone;
/// assert_eq!(zone("\"America/New_York\"").unwrap().name(), "America/New_York");
/// assert_eq!(zone("/mozilla.org/20050126_1/America/New_York").unwrap().name(), "America/New_York");
/// assert!(zone("Custom Zone").is_none());
/// ```
pub fn zone(tzid: &str) -> Option<chrono_tz::Tz> {
    let tzid = tzid.trim().trim_matches('"');
    if let Ok(tz) = tzid.parse::<chrono_tz::Tz>() {
        return Some(tz);
    }
    tzid.char_indices()
        .filter(|(_, c)| *c == '/')
        .find_map(|(i, _)| tzid[i + 1..].parse::<chrono_tz::Tz>().ok())
}

/// Milliseconds of midnight UTC of a `YYYY-MM-DD` date.
pub fn date_millis(date: &str) -> Option<i64> {
    let date = NaiveDate::parse_from_str(date.trim(), "%Y-%m-%d").ok()?;
    Some(When::Date(date).millis())
}
