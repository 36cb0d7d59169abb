//! The calendar source: iCalendar (`.ics`, RFC 5545) files.
//!
//! Each VEVENT becomes `CALENDAR` events keyed `<tenant>/ics/<UID>` — or, for a recurring event,
//! one per occurrence, `ics/<UID>/<start as 20260105T090000Z>`:
//! - recurrences (`RRULE`, `RDATE`, minus `EXDATE`) are expanded with the `rrule` crate inside a
//!   window ([`IcsConfig`]: a year either side of the read by default, or absolute dates), at
//!   most `max_occurrences` per series; a series with no occurrence in the window is
//!   represented by its first one, so nothing silently disappears;
//! - a VEVENT with `RECURRENCE-ID` replaces that occurrence (and may move it);
//! - `STATUS:CANCELLED` on an occurrence or a whole event publishes tombstones;
//! - `title` = SUMMARY, `body` = DESCRIPTION (else SUMMARY), `occurred_at` = the occurrence's
//!   start, `authors` = ORGANIZER, `participants` = ATTENDEEs (CN and mailto), `thread_id` =
//!   `ics/<UID>`, `links` = URL and ATTACH (inline binaries as metadata only);
//! - `extras`: `uid`, `file`, `method`, `location`, `status`, `sequence`, `dtend`, `duration`,
//!   `all_day`, `rrule`, `recurrence_id`, `attendees` (JSON: name, address, PARTSTAT, ROLE,
//!   RSVP), `categories`, `class`, … and `notes` on what could not be read faithfully (an
//!   unknown time zone read as UTC, an unreadable recurrence).
//!
//! Times: `Z` is UTC, `TZID` is resolved in the tz database (also behind vendor prefixes like
//! `/mozilla.org/…/America/New_York`), floating times and unknown zones are read as UTC with a
//! note; all-day dates are midnight UTC. The version hashes every field, so a moved meeting or a
//! new attendee is a new version.
//!
//! A file that is not UTF-8, too large or not iCalendar, and a VEVENT without a readable
//! DTSTART, become dead letters with the reason (the parser's line for syntax errors), their
//! location and their bytes.

mod config;
pub mod event;
mod source;
pub mod time;

pub use config::IcsConfig;
pub use event::{Attendee, CalendarEvent};
pub(crate) use source::window;
pub use source::{parse_calendar, read_ics};

#[cfg(test)]
mod tests;
