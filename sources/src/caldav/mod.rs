//! The CalDAV source: follow a calendar collection on a server (RFC 4791), fetching only what
//! changed.
//!
//! - **Changes only**: `REPORT sync-collection` (RFC 6578) with the token saved after the last
//!   acknowledged publish; the whole collection is listed on the first sync, when the server
//!   says the token expired, or with `PROPFIND` (etags compared) when it has no sync support.
//! - **Reading**: each new or changed calendar object is fetched and read with the iCalendar
//!   reader ([`crate::ics`]: recurrences expanded in the `[ics]` window, overrides,
//!   cancellations as tombstones), so a calendar synced from a server and the same calendar
//!   exported to an `.ics` file give the same source ids (`ics/<UID>[/<occurrence>]`).
//! - **Deletes and moves**: an object removed on the server tombstones every event it yielded;
//!   an occurrence an edited object no longer yields is tombstoned; an event that moved to
//!   another object in the same sync stays live.
//! - **Restarts**: the state ([`CaldavState`]: sync token, per object its etag and the versions
//!   it published) is saved only after Kafka acknowledged the events, so a crash re-fetches
//!   and nothing is lost; an unchanged event is never republished.
//! - **Bad objects**: too large, not UTF-8, not iCalendar or without a readable VEVENT become dead
//!   letters with the reason; what the object published before stays live.
//! - **Credentials** come from `[caldav]` or `EPIGRAPH_CALDAV__PASSWORD` and never appear in logs,
//!   errors or `Debug` output; user information inside the URL is refused.

mod client;
mod config;
mod source;
mod state;

pub use client::{
    CaldavError, DavClient, Member, Multistatus, MultistatusError, parse_multistatus,
};
pub use config::CaldavConfig;
pub use source::{Fetched, Sync, apply, plan, sync_calendar};
pub use state::{CaldavState, PublishedObject};

#[cfg(test)]
mod tests;
