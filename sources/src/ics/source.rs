//! Reading `.ics` files into calendar events: one event per occurrence inside the window,
//! overrides applied, cancellations as tombstones.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::TimeZone;
use epigraph_schemas::{Op, Party, SourceEvent, SourceKind};
use icalendar::parser::{Component, read_components, unfold};
use rrule::RRuleSet;

use super::IcsConfig;
use super::event::CalendarEvent;
use super::time::date_millis;
use crate::SourceError;
use crate::kafka::DeadLetter;
use crate::scan::{Scan, check_tenant};

const DAY_MS: i64 = 86_400_000;

/// Reads one `.ics` file or every `.ics` file under a folder (sorted), at time `now` (ms).
pub fn read_ics(
    path: &Path,
    tenant: &str,
    config: &IcsConfig,
    max_dead_letter_bytes: usize,
    now: i64,
) -> Result<Scan, SourceError> {
    check_tenant(tenant)?;
    let window = window(config, now)?;
    let files: Vec<std::path::PathBuf> = if path.is_dir() {
        let mut files: Vec<_> = walkdir::WalkDir::new(path)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(|e| e.into_path())
            .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("ics")))
            .collect();
        files.sort();
        files
    } else if path.is_file() {
        vec![path.to_path_buf()]
    } else {
        return Err(SourceError::Config(format!(
            "{} is neither an .ics file nor a folder",
            path.display()
        )));
    };
    let mut scan = Scan::default();
    for file in files {
        let location = file.display().to_string();
        let bytes = std::fs::read(&file).map_err(|source| SourceError::Io {
            path: file.clone(),
            source,
        })?;
        let dead = |reason: String| {
            DeadLetter::new(
                &reason,
                "ics",
                Some(tenant),
                &location,
                &bytes,
                max_dead_letter_bytes,
            )
        };
        if bytes.len() as u64 > config.max_file_bytes {
            scan.dead_letters.push(dead(format!(
                "the file has {} bytes, more than ics.max_file_bytes = {}",
                bytes.len(),
                config.max_file_bytes
            )));
            continue;
        }
        let Ok(text) = std::str::from_utf8(&bytes) else {
            scan.dead_letters
                .push(dead("the file is not UTF-8 (RFC 5545 requires it)".into()));
            continue;
        };
        scan.extend(parse_calendar(
            text,
            &location,
            tenant,
            config,
            window,
            max_dead_letter_bytes,
        ));
    }
    Ok(scan)
}

/// The expansion window `[start, end)` in ms.
pub(crate) fn window(config: &IcsConfig, now: i64) -> Result<(i64, i64), SourceError> {
    let absolute = |value: &Option<String>, name: &str| -> Result<Option<i64>, SourceError> {
        value
            .as_deref()
            .map(|v| {
                date_millis(v).ok_or_else(|| {
                    SourceError::Config(format!("ics.{name} = {v:?} is not a YYYY-MM-DD date"))
                })
            })
            .transpose()
    };
    let start = absolute(&config.window_start, "window_start")?
        .unwrap_or(now - i64::from(config.window_days_before) * DAY_MS);
    let end = absolute(&config.window_end, "window_end")?
        .unwrap_or(now + i64::from(config.window_days_after) * DAY_MS);
    if start >= end {
        return Err(SourceError::Config(
            "the ics window is empty (start is not before end)".into(),
        ));
    }
    Ok((start, end))
}

/// The events of one calendar text (pure; `location` names it in dead letters and extras).
///
/// ```
/// use epigraph_sources::ics::{IcsConfig, parse_calendar};
/// let text = "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:1\r\nDTSTART:20260105T090000Z\r\n\
///             RRULE:FREQ=WEEKLY;COUNT=3\r\nSUMMARY:Atlas sync\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";
/// let window = (0, 4_102_444_800_000); // 1970 to 2100
/// let scan = parse_calendar(text, "a.ics", "acme", &IcsConfig::default(), window, 1024);
/// assert_eq!(scan.events.len(), 3);
/// assert_eq!(scan.events[1].source_id, "ics/1/20260112T090000Z");
/// ```
pub fn parse_calendar(
    text: &str,
    location: &str,
    tenant: &str,
    config: &IcsConfig,
    window: (i64, i64),
    max_dead_letter_bytes: usize,
) -> Scan {
    let mut scan = Scan::default();
    let dead = |reason: &str, raw: &str| {
        DeadLetter::new(
            reason,
            "ics",
            Some(tenant),
            location,
            raw.as_bytes(),
            max_dead_letter_bytes,
        )
    };
    let unfolded = unfold(text.trim_start_matches('\u{feff}'));
    let roots = match read_components(&unfolded) {
        Ok(roots) => roots,
        Err(e) => {
            let reason = format!("not a valid iCalendar file: {}", first_lines(&e, 4));
            scan.dead_letters.push(dead(&reason, text));
            return scan;
        }
    };
    // Calendars (possibly several per file) and bare components at the root.
    let mut vevents: Vec<(&Component<'_>, Option<String>)> = Vec::new();
    for root in &roots {
        if root.name.as_str().eq_ignore_ascii_case("VCALENDAR") {
            let method = root
                .find_prop("METHOD")
                .map(|p| p.val.as_str().trim().to_string());
            for child in &root.components {
                if child.name.as_str().eq_ignore_ascii_case("VEVENT") {
                    vevents.push((child, method.clone()));
                }
            }
        } else if root.name.as_str().eq_ignore_ascii_case("VEVENT") {
            vevents.push((root, None));
        }
    }
    // Series by UID: the master and its overrides.
    let mut series: BTreeMap<String, Series> = BTreeMap::new();
    for (index, (component, method)) in vevents.into_iter().enumerate() {
        match CalendarEvent::read(component) {
            Ok(event) => {
                let uid = event
                    .uid
                    .clone()
                    .unwrap_or_else(|| format!("{}#{index}", file_stem(location)));
                let entry = series.entry(uid).or_default();
                entry.method = method;
                match event.recurrence_id {
                    Some(id) => {
                        entry.overrides.insert(id.millis(), event);
                    }
                    None => entry.master = Some(event),
                }
            }
            Err(reason) => {
                let uid = component
                    .find_prop("UID")
                    .map(|p| p.val.as_str().to_string())
                    .unwrap_or_default();
                let reason = format!("VEVENT {} (UID {uid:?}): {reason}", index + 1);
                scan.dead_letters
                    .push(dead(&reason, &component_text(component)));
            }
        }
    }
    let ingested_at = crate::now_millis();
    for (uid, mut series) in series {
        let method = series.method.take();
        let context = Context {
            tenant,
            location,
            uid: &uid,
            method: method.as_deref(),
            ingested_at,
        };
        expand(&context, series, config, window, &mut scan);
    }
    scan
}

#[derive(Default)]
struct Series {
    master: Option<CalendarEvent>,
    overrides: BTreeMap<i64, CalendarEvent>,
    method: Option<String>,
}

struct Context<'a> {
    tenant: &'a str,
    location: &'a str,
    uid: &'a str,
    method: Option<&'a str>,
    ingested_at: i64,
}

/// One series into events: occurrences in the window (or the first one, when the window holds
/// none), each replaced by its override if any; cancelled ones as tombstones.
fn expand(
    context: &Context<'_>,
    mut series: Series,
    config: &IcsConfig,
    window: (i64, i64),
    scan: &mut Scan,
) {
    let Some(master) = series.master.take() else {
        // Overrides without their master (an invitation update for one occurrence).
        for (id, event) in std::mem::take(&mut series.overrides) {
            push(context, &event, id, true, scan);
        }
        return;
    };
    if !master.recurs() {
        let id = master.start.millis();
        push(context, &master, id, false, scan);
        return;
    }
    let mut master = master;
    let starts = match occurrences(&master, window, config.max_occurrences) {
        Ok((starts, limited)) => {
            if limited {
                master.notes.push(format!(
                    "more than ics.max_occurrences = {} occurrences in the window; the rest is not expanded",
                    config.max_occurrences
                ));
            }
            if starts.is_empty() {
                master.notes.push(
                    "no occurrence inside the window; the first one stands for the series".into(),
                );
                vec![master.start.millis()]
            } else {
                starts
            }
        }
        Err(reason) => {
            master.notes.push(format!(
                "the recurrence could not be expanded ({reason}); only the first occurrence is published"
            ));
            vec![master.start.millis()]
        }
    };
    for start in starts {
        match series.overrides.remove(&start) {
            Some(overriding) => push(context, &overriding, start, true, scan),
            None => push(context, &master, start, true, scan),
        }
    }
    for (id, event) in std::mem::take(&mut series.overrides) {
        push(context, &event, id, true, scan);
    }
}

/// Why a recurrence could not be expanded (the series then stands as its first occurrence).
#[derive(Debug, thiserror::Error)]
enum RecurrenceError {
    #[error("the recurrence has non-ASCII characters")]
    NotAscii,
    #[error("the recurrence crashed its parser")]
    ParserPanicked,
    #[error("{0}")]
    Invalid(#[from] rrule::RRuleError),
    #[error("window bound {0} is out of range")]
    Window(i64),
    #[error("expanding the recurrence crashed")]
    ExpansionPanicked,
}

/// Occurrence starts (ms) of a recurring event inside the window.
fn occurrences(
    event: &CalendarEvent,
    window: (i64, i64),
    max: u16,
) -> Result<(Vec<i64>, bool), RecurrenceError> {
    let text = event.recurrence.join("\n");
    // RFC 5545 recurrence values are ASCII; the rrule crate slices bytes and panics on
    // anything else, and a third-party panic must not take the connector down either.
    if !text.is_ascii() {
        return Err(RecurrenceError::NotAscii);
    }
    let parsed = std::panic::catch_unwind(|| text.parse::<RRuleSet>())
        .map_err(|_| RecurrenceError::ParserPanicked)?;
    let set = parsed?;
    let bound = |ms: i64| {
        rrule::Tz::UTC
            .timestamp_millis_opt(ms)
            .single()
            .ok_or(RecurrenceError::Window(ms))
    };
    let (after, before) = (bound(window.0)?, bound(window.1)?);
    let result = std::panic::catch_unwind(move || set.after(after).before(before).all(max))
        .map_err(|_| RecurrenceError::ExpansionPanicked)?;
    Ok((
        result.dates.iter().map(|d| d.timestamp_millis()).collect(),
        result.limited,
    ))
}

/// The event of one occurrence (or a tombstone when it is cancelled).
fn push(
    context: &Context<'_>,
    event: &CalendarEvent,
    occurrence: i64,
    recurring: bool,
    scan: &mut Scan,
) {
    let source_id = if recurring {
        format!("ics/{}/{}", context.uid, basic_utc(occurrence))
    } else {
        format!("ics/{}", context.uid)
    };
    if event.cancelled() {
        scan.events.push(SourceEvent::tombstone(
            context.tenant,
            SourceKind::Calendar,
            &source_id,
            context.ingested_at,
        ));
        return;
    }
    let body = event
        .description
        .clone()
        .filter(|d| !d.trim().is_empty())
        .or_else(|| event.summary.clone())
        .unwrap_or_default();
    let mut out = SourceEvent::upsert(
        context.tenant,
        SourceKind::Calendar,
        &source_id,
        event.summary.clone(),
        body,
        context.ingested_at,
    );
    // An override moves its occurrence: its own DTSTART is when it happens.
    let start = if event.recurrence_id.is_some() {
        event.start.millis()
    } else {
        occurrence
    };
    out.occurred_at = Some(start);
    out.authors = event.organizer.clone().into_iter().collect();
    out.participants = event
        .attendees
        .iter()
        .map(|a| Party {
            name: a.name.clone(),
            address: Some(a.address.clone()),
        })
        .collect();
    out.thread_id = Some(format!("ics/{}", context.uid));
    out.links = event.links.clone();
    let mut extras = event.extras.clone();
    extras.insert("uid".into(), context.uid.to_string());
    extras.insert("file".into(), context.location.to_string());
    extras.insert("all_day".into(), event.start.is_date().to_string());
    if let Some(end) = &event.end {
        let end = end.millis() + (start - event.start.millis());
        extras.insert("dtend".into(), end.to_string());
    }
    let optional = [
        ("method", context.method.map(str::to_string)),
        ("location", event.location.clone()),
        ("status", event.status.clone()),
        ("sequence", event.sequence.clone()),
        ("duration", event.duration.clone()),
        (
            "rrule",
            (!event.rrules.is_empty()).then(|| event.rrules.join(" | ")),
        ),
        ("recurrence_id", recurring.then(|| basic_utc(occurrence))),
        (
            "notes",
            (!event.notes.is_empty()).then(|| event.notes.join("; ")),
        ),
        (
            "attendees",
            (!event.attendees.is_empty())
                .then(|| serde_json::to_string(&event.attendees).unwrap_or_default()),
        ),
    ];
    for (key, value) in optional {
        if let Some(value) = value {
            extras.insert(key.into(), value);
        }
    }
    out.extras = extras;
    debug_assert_eq!(out.op, Op::Upsert);
    out.reversion();
    scan.events.push(out);
}

/// `20260105T090000Z`.
fn basic_utc(ms: i64) -> String {
    chrono::Utc.timestamp_millis_opt(ms).single().map_or_else(
        || ms.to_string(),
        |t| t.format("%Y%m%dT%H%M%SZ").to_string(),
    )
}

fn file_stem(location: &str) -> String {
    Path::new(location).file_stem().map_or_else(
        || location.to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

fn first_lines(text: &str, n: usize) -> String {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .take(n)
        .collect::<Vec<_>>()
        .join(" / ")
}

/// A component's content lines, for the dead letter's raw bytes.
fn component_text(component: &Component<'_>) -> String {
    let mut out = format!("BEGIN:{}\n", component.name.as_str());
    for prop in &component.properties {
        out.push_str(prop.name.as_str());
        for p in &prop.params {
            out.push(';');
            out.push_str(p.key.as_str());
            if let Some(v) = &p.val {
                out.push('=');
                out.push_str(v.as_str());
            }
        }
        out.push(':');
        out.push_str(prop.val.as_str());
        out.push('\n');
    }
    out.push_str(&format!("END:{}\n", component.name.as_str()));
    out
}
