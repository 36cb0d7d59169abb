//! One VEVENT read into what the source publishes: its people, text, times and recurrence.

use std::collections::BTreeMap;

use epigraph_schemas::{Link, Party};
use icalendar::parser::{Component, Property};

use super::time::{NotATime, When, parse_when};

pub use epigraph_schemas::Attendee;

/// A VEVENT, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct CalendarEvent {
    /// `UID`, if any.
    pub uid: Option<String>,
    /// `SUMMARY`, unescaped.
    pub summary: Option<String>,
    /// `DESCRIPTION`, unescaped.
    pub description: Option<String>,
    /// `LOCATION`, unescaped.
    pub location: Option<String>,
    /// `DTSTART`.
    pub start: When,
    /// `DTEND` (or `DTSTART` + `DURATION` is not computed: the duration is kept as written).
    pub end: Option<When>,
    /// `DURATION`, as written.
    pub duration: Option<String>,
    /// `STATUS` (`CONFIRMED`, `TENTATIVE`, `CANCELLED`).
    pub status: Option<String>,
    /// `SEQUENCE`.
    pub sequence: Option<String>,
    /// `RECURRENCE-ID`: this VEVENT overrides one occurrence of its series.
    pub recurrence_id: Option<When>,
    /// The recurrence content lines (`RRULE`, `RDATE`, `EXDATE`) rewritten for the `rrule`
    /// crate, with the zone of each value resolved.
    pub recurrence: Vec<String>,
    /// The `RRULE` values as written (for the event's extras).
    pub rrules: Vec<String>,
    /// `ORGANIZER`.
    pub organizer: Option<Party>,
    /// `ATTENDEE`s.
    pub attendees: Vec<Attendee>,
    /// `URL` and `ATTACH`.
    pub links: Vec<Link>,
    /// Notes about what could not be read faithfully (unknown zones, bad recurrence values).
    pub notes: Vec<String>,
    /// Other properties kept as extras (`CATEGORIES`, `CLASS`, `TRANSP`, …).
    pub extras: BTreeMap<String, String>,
}

/// Why a VEVENT, or one of its times, cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    /// The VEVENT has no `DTSTART`.
    #[error("the VEVENT has no DTSTART")]
    NoStart,
    /// A time property (`DTSTART`, `DTEND`, `RECURRENCE-ID`) is not a DATE or DATE-TIME.
    #[error("{property}: {reason}")]
    Time {
        /// The property's name as written.
        property: String,
        /// Why its value is not a time.
        #[source]
        reason: NotATime,
    },
}

fn param(prop: &Property<'_>, key: &str) -> Option<String> {
    prop.params
        .iter()
        .find(|p| p.key.as_str().eq_ignore_ascii_case(key))
        .and_then(|p| p.val.as_ref())
        .map(|v| v.as_str().trim_matches('"').to_string())
}

fn text(prop: &Property<'_>) -> String {
    prop.val.clone().unescape_text().as_str().to_string()
}

fn address(value: &str) -> String {
    let value = value.trim();
    match value.get(..7) {
        Some(scheme) if scheme.eq_ignore_ascii_case("mailto:") => value[7..].to_string(),
        _ => value.to_string(),
    }
}

fn when(prop: &Property<'_>) -> Result<(When, Option<String>), EventError> {
    let tzid = param(prop, "TZID");
    parse_when(prop.val.as_str(), tzid.as_deref()).map_err(|reason| EventError::Time {
        property: prop.name.as_str().to_string(),
        reason,
    })
}

impl CalendarEvent {
    /// Reads a VEVENT; fails only without a readable `DTSTART`.
    pub fn read(component: &Component<'_>) -> Result<Self, EventError> {
        let start_prop = component.find_prop("DTSTART").ok_or(EventError::NoStart)?;
        let (start, note) = when(start_prop)?;
        let mut event = CalendarEvent {
            uid: None,
            summary: None,
            description: None,
            location: None,
            start,
            end: None,
            duration: None,
            status: None,
            sequence: None,
            recurrence_id: None,
            recurrence: vec![format!("DTSTART{}", start.rrule_value())],
            rrules: Vec::new(),
            organizer: None,
            attendees: Vec::new(),
            links: Vec::new(),
            notes: note.into_iter().collect(),
            extras: BTreeMap::new(),
        };
        for prop in &component.properties {
            let name = prop.name.as_str().to_ascii_uppercase();
            match name.as_str() {
                "UID" => event.uid = Some(prop.val.as_str().trim().to_string()),
                "SUMMARY" => event.summary = Some(text(prop)),
                "DESCRIPTION" => event.description = Some(text(prop)),
                "LOCATION" => event.location = Some(text(prop)),
                "STATUS" => event.status = Some(prop.val.as_str().trim().to_ascii_uppercase()),
                "SEQUENCE" => event.sequence = Some(prop.val.as_str().trim().to_string()),
                "DURATION" => event.duration = Some(prop.val.as_str().trim().to_string()),
                "DTEND" => match when(prop) {
                    Ok((end, _)) => event.end = Some(end),
                    Err(e) => event.notes.push(e.to_string()),
                },
                "RECURRENCE-ID" => match when(prop) {
                    Ok((id, _)) => event.recurrence_id = Some(id),
                    Err(e) => event.notes.push(e.to_string()),
                },
                "RRULE" => {
                    event.rrules.push(prop.val.as_str().trim().to_string());
                    event
                        .recurrence
                        .push(format!("RRULE:{}", prop.val.as_str().trim()));
                }
                "RDATE" | "EXDATE" => event.dates(&name, prop),
                "ORGANIZER" => {
                    event.organizer = Some(Party {
                        name: param(prop, "CN"),
                        address: Some(address(prop.val.as_str())),
                    })
                }
                "ATTENDEE" => event.attendees.push(Attendee {
                    name: param(prop, "CN"),
                    address: address(prop.val.as_str()),
                    partstat: param(prop, "PARTSTAT"),
                    role: param(prop, "ROLE"),
                    rsvp: param(prop, "RSVP"),
                }),
                "URL" => event.links.push(Link {
                    rel: "url".into(),
                    target: prop.val.as_str().trim().to_string(),
                    media_type: None,
                    size_bytes: None,
                }),
                "ATTACH" => {
                    let inline =
                        param(prop, "VALUE").is_some_and(|v| v.eq_ignore_ascii_case("BINARY"));
                    event.links.push(Link {
                        rel: "attachment".into(),
                        target: if inline {
                            "inline".into()
                        } else {
                            prop.val.as_str().trim().to_string()
                        },
                        media_type: param(prop, "FMTTYPE"),
                        size_bytes: inline.then(|| (prop.val.as_str().len() * 3 / 4) as i64),
                    })
                }
                "CATEGORIES" | "CLASS" | "TRANSP" | "PRIORITY" | "X-LOCATION" | "GEO"
                | "CONFERENCE" | "COLOR" => {
                    let key = name.to_ascii_lowercase();
                    let value = text(prop);
                    event
                        .extras
                        .entry(key)
                        .and_modify(|v| {
                            v.push_str(", ");
                            v.push_str(&value)
                        })
                        .or_insert(value);
                }
                _ => {}
            }
        }
        Ok(event)
    }

    /// `RDATE`/`EXDATE` values (comma-separated, with their zone), rewritten one per line as
    /// the `rrule` crate reads them; `PERIOD` values keep their start.
    fn dates(&mut self, name: &str, prop: &Property<'_>) {
        let tzid = param(prop, "TZID");
        for value in prop
            .val
            .as_str()
            .split(',')
            .filter(|v| !v.trim().is_empty())
        {
            let start = value.split('/').next().unwrap_or(value);
            match parse_when(start, tzid.as_deref()) {
                Ok((when, _)) => self
                    .recurrence
                    .push(format!("{name}{}", when.rrule_value())),
                Err(e) => self.notes.push(format!("{name}: {e}")),
            }
        }
    }

    /// Whether the event recurs (`RRULE` or `RDATE`).
    pub fn recurs(&self) -> bool {
        self.recurrence
            .iter()
            .any(|l| l.starts_with("RRULE") || l.starts_with("RDATE"))
    }

    /// Whether it is cancelled.
    pub fn cancelled(&self) -> bool {
        self.status.as_deref() == Some("CANCELLED")
    }
}
