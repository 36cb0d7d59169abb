//! One sync of a calendar collection: what changed on the server, fetched and read into events;
//! what disappeared, tombstoned.

use std::collections::{BTreeMap, BTreeSet};

use epigraph_schemas::{Op, SourceEvent, SourceKind};

use super::client::{CaldavError, DavClient, Member, Multistatus};
use super::state::{CaldavState, PublishedObject};
use crate::ics::IcsConfig;
use crate::kafka::DeadLetter;
use crate::scan::{Scan, check_tenant};
use crate::{SourceError, ics};

/// The result of one sync: what to publish, and the state to save once it is acknowledged.
#[derive(Debug)]
pub struct Sync {
    /// Events (tombstones first) and dead letters to publish.
    pub scan: Scan,
    /// The state after this sync.
    pub next: CaldavState,
    /// Calendar objects fetched (new or changed).
    pub fetched: usize,
    /// Calendar objects removed on the server.
    pub removed: usize,
    /// Whether the whole collection was listed (first sync, expired token, no sync support).
    pub full: bool,
}

/// Which objects to fetch and which are gone, from the server's listing and the last state.
///
/// A full listing names every member, so a known object missing from it is gone; an
/// incremental one (`sync-collection` with a token) names only changes.
///
/// ```
/// use epigraph_sources::caldav::{CaldavState, Member, plan};
/// let mut state = CaldavState::default();
/// state.objects.insert("/c/a.ics".into(), Default::default());
/// state.objects.get_mut("/c/a.ics").unwrap().etag = Some("1".into());
/// state.objects.insert("/c/b.ics".into(), Default::default());
/// let listing = vec![
///     Member { href: "/c/a.ics".into(), etag: Some("1".into()), gone: false },
///     Member { href: "/c/new.ics".into(), etag: Some("7".into()), gone: false },
/// ];
/// let (fetch, removed) = plan(&state, &listing, true);
/// assert_eq!(fetch, vec![("/c/new.ics".to_string(), Some("7".to_string()))]);
/// assert_eq!(removed, vec!["/c/b.ics".to_string()]);
/// ```
pub fn plan(
    state: &CaldavState,
    listing: &[Member],
    full: bool,
) -> (Vec<(String, Option<String>)>, Vec<String>) {
    let mut fetch = Vec::new();
    let mut removed = BTreeSet::new();
    for member in listing {
        if member.gone {
            if state.objects.contains_key(&member.href) {
                removed.insert(member.href.clone());
            }
            continue;
        }
        let known = state.objects.get(&member.href);
        // No etag from the server: fetch to be sure.
        if member.etag.is_none() || known.and_then(|o| o.etag.as_ref()) != member.etag.as_ref() {
            fetch.push((member.href.clone(), member.etag.clone()));
        }
    }
    if full {
        let listed: BTreeSet<&str> = listing
            .iter()
            .filter(|m| !m.gone)
            .map(|m| m.href.as_str())
            .collect();
        removed.extend(
            state
                .objects
                .keys()
                .filter(|href| !listed.contains(href.as_str()))
                .cloned(),
        );
    }
    (fetch, removed.into_iter().collect())
}

/// A fetched calendar object: its href, its etag and what reading it gave.
#[derive(Debug)]
pub struct Fetched {
    /// The member's href.
    pub href: String,
    /// Its entity tag.
    pub etag: Option<String>,
    /// The events and dead letters read from it.
    pub scan: Scan,
}

/// Fold fetched and removed objects into the events to publish and the next state.
///
/// An event whose version was already published from the same object is not published again.
/// An event that an object no longer yields (the object was removed, an occurrence was dropped)
/// is tombstoned — unless another object now yields it (a move). An object that yields only
/// dead letters keeps what it published before.
pub fn apply(
    state: &CaldavState,
    tenant: &str,
    fetched: Vec<Fetched>,
    removed: &[String],
    now: i64,
) -> (Scan, CaldavState) {
    let mut next = state.clone();
    // What is live on the topic now, whichever object published it.
    let published: BTreeMap<&String, &String> = state
        .objects
        .values()
        .flat_map(|o| o.events.iter())
        .filter(|(_, version)| *version != "deleted")
        .collect();
    let mut changed = Vec::new();
    let mut dead_letters = Vec::new();
    let mut dropped: BTreeSet<String> = BTreeSet::new();
    for href in removed {
        if let Some(object) = next.objects.remove(href) {
            dropped.extend(
                object
                    .events
                    .into_iter()
                    .filter(|(_, version)| version != "deleted")
                    .map(|(id, _)| id),
            );
        }
    }
    for object in fetched {
        dead_letters.extend(object.scan.dead_letters);
        let previous = next.objects.get(&object.href).cloned().unwrap_or_default();
        if object.scan.events.is_empty() && !previous.events.is_empty() {
            // Unreadable now: keep what it published before, but remember the etag so the same
            // broken version is not fetched (and dead-lettered) again.
            next.objects.insert(
                object.href,
                PublishedObject {
                    etag: object.etag,
                    events: previous.events,
                    refused: false,
                },
            );
            continue;
        }
        let mut events = BTreeMap::new();
        for event in object.scan.events {
            events.insert(event.source_id.clone(), event.version.clone());
            let same_object = previous.events.get(&event.source_id) == Some(&event.version);
            let moved_unchanged = published.get(&event.source_id) == Some(&&event.version);
            if !same_object && !moved_unchanged {
                changed.push(event);
            }
        }
        dropped.extend(
            previous
                .events
                .iter()
                .filter(|(id, version)| *version != "deleted" && !events.contains_key(*id))
                .map(|(id, _)| id.clone()),
        );
        next.objects.insert(
            object.href,
            PublishedObject {
                etag: object.etag,
                events,
                refused: false,
            },
        );
    }
    // Still yielded by some object (moved to another href): not a removal.
    let live: BTreeSet<&String> = next
        .objects
        .values()
        .flat_map(|o| o.events.iter())
        .filter(|(_, version)| *version != "deleted")
        .map(|(id, _)| id)
        .collect();
    let mut events: Vec<SourceEvent> = dropped
        .iter()
        .filter(|id| !live.contains(id))
        .map(|id| SourceEvent::tombstone(tenant, SourceKind::Calendar, id, now))
        .collect();
    // Tombstones first (cancellations included), so an event that moved within this sync ends
    // up live.
    let (cancelled, upserts): (Vec<_>, Vec<_>) =
        changed.into_iter().partition(|e| e.op == Op::Delete);
    events.extend(cancelled);
    events.extend(upserts);
    (
        Scan {
            events,
            dead_letters,
        },
        next,
    )
}

/// One sync of the collection behind `client` against the last `state`.
///
/// Uses `sync-collection` with the saved token; lists the whole collection on the first sync,
/// when the token expired, or (with `PROPFIND`) when the server has no `sync-collection`.
/// Objects are read with the iCalendar reader (`[ics]`: recurrence window, size limit); an
/// object that is too large, not UTF-8 or not iCalendar is a dead letter with the reason.
pub async fn sync_calendar(
    client: &DavClient,
    state: &CaldavState,
    ics: &IcsConfig,
    max_dead_letter_bytes: usize,
    now: i64,
) -> Result<Sync, SourceError> {
    let tenant = state.tenant.clone();
    check_tenant(&tenant)?;
    let window = ics::window(ics, now)?;
    let (listing, full): (Multistatus, bool) = match state.sync_token.as_deref() {
        Some(token) => match client.sync_collection(Some(token)).await {
            Ok(listing) => (listing, false),
            Err(CaldavError::InvalidSyncToken { .. }) => {
                tracing::info!(collection = %client.collection(), "sync token expired; listing the whole collection");
                (full_listing(client).await?, true)
            }
            Err(e) => return Err(e.into()),
        },
        None => (full_listing(client).await?, true),
    };
    let members: Vec<Member> = listing
        .members
        .into_iter()
        .filter(|m| !client.is_collection(&m.href))
        .collect();
    let (fetch, removed) = plan(state, &members, full);
    let mut fetched = Vec::new();
    let mut gone = removed;
    for (href, listed_etag) in fetch {
        let Some((bytes, etag)) = client.get(&href).await? else {
            // Removed between the listing and the fetch.
            if state.objects.contains_key(&href) {
                gone.push(href);
            }
            continue;
        };
        let location = client.member_url(&href).to_string();
        let scan = read_object(
            &bytes,
            &location,
            &tenant,
            ics,
            window,
            max_dead_letter_bytes,
        );
        fetched.push(Fetched {
            href,
            etag: etag.or(listed_etag),
            scan,
        });
    }
    let fetched_count = fetched.len();
    let removed_count = gone.len();
    let (scan, mut next) = apply(state, &tenant, fetched, &gone, now);
    next.sync_token = listing.sync_token;
    Ok(Sync {
        scan,
        next,
        fetched: fetched_count,
        removed: removed_count,
        full,
    })
}

async fn full_listing(client: &DavClient) -> Result<Multistatus, CaldavError> {
    match client.sync_collection(None).await {
        Err(CaldavError::SyncUnsupported { .. }) => client.list_members().await,
        other => other,
    }
}

/// Read one calendar object's bytes (size and encoding checked) into events.
fn read_object(
    bytes: &[u8],
    location: &str,
    tenant: &str,
    ics: &IcsConfig,
    window: (i64, i64),
    max_dead_letter_bytes: usize,
) -> Scan {
    let dead = |reason: String| Scan {
        events: Vec::new(),
        dead_letters: vec![DeadLetter::new(
            &reason,
            "caldav",
            Some(tenant),
            location,
            bytes,
            max_dead_letter_bytes,
        )],
    };
    if bytes.len() as u64 > ics.max_file_bytes {
        return dead(format!(
            "the calendar object has {} bytes, more than ics.max_file_bytes = {}",
            bytes.len(),
            ics.max_file_bytes
        ));
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return dead("the calendar object is not UTF-8 (RFC 5545 requires it)".into());
    };
    let scan = ics::parse_calendar(text, location, tenant, ics, window, max_dead_letter_bytes);
    if scan.events.is_empty() && scan.dead_letters.is_empty() {
        return dead("the calendar object holds no VEVENT".into());
    }
    scan
}
