//! One sync of the followed mailboxes: new UIDs fetched and read with the mail parser, vanished
//! UIDs tombstoned (unless the message is still in a followed mailbox).

use std::collections::{BTreeMap, BTreeSet};

use epigraph_schemas::{SourceEvent, SourceKind};

use super::client::{ImapSession, MailboxStatus};
use super::state::{ImapState, MailboxState, PublishedMessage};
use crate::SourceError;
use crate::kafka::DeadLetter;
use crate::mail::{MailConfig, MailError, parse_message};
use crate::scan::{Scan, check_tenant};

/// What to do with one mailbox, from its counters, its UIDs on the server and the last state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MailboxPlan {
    /// UIDVALIDITY changed (or the mailbox is new): every UID of the state is void, every
    /// listed UID is read again.
    pub reset: bool,
    /// UIDs to fetch, ascending.
    pub fetch: Vec<u32>,
    /// UIDs of the state that are gone from the server (expunged or moved away).
    pub removed: Vec<u32>,
}

/// Whether a mailbox certainly has not changed since `known`: same UIDVALIDITY and UIDNEXT
/// (no message added) and the same number of messages (none expunged).
pub fn unchanged(known: Option<&MailboxState>, status: &MailboxStatus) -> bool {
    known.is_some_and(|known| {
        known.uid_validity == Some(status.uid_validity)
            && status.uid_next.is_some()
            && known.uid_next == status.uid_next
            && known.messages.len() == status.exists as usize
            && !known.messages.values().any(|m| m.retry)
    })
}

/// Which UIDs to fetch and which are gone.
///
/// ```
/// use epigraph_sources::imap::{MailboxState, MailboxStatus, plan};
/// let mut known = MailboxState { uid_validity: Some(7), ..Default::default() };
/// known.messages.insert(1, Default::default());
/// known.messages.insert(2, Default::default());
/// let status = MailboxStatus { uid_validity: 7, uid_next: Some(4), exists: 2 };
/// let next = plan(Some(&known), &status, &[2, 3]);
/// assert_eq!((next.reset, next.fetch, next.removed), (false, vec![3], vec![1]));
/// // A new UIDVALIDITY voids every UID: all are read again.
/// let status = MailboxStatus { uid_validity: 8, uid_next: Some(3), exists: 2 };
/// let reread = plan(Some(&known), &status, &[1, 2]);
/// assert_eq!((reread.reset, reread.fetch, reread.removed), (true, vec![1, 2], vec![1, 2]));
/// ```
pub fn plan(known: Option<&MailboxState>, status: &MailboxStatus, listed: &[u32]) -> MailboxPlan {
    let mut listed: Vec<u32> = listed.to_vec();
    listed.sort_unstable();
    listed.dedup();
    let empty = MailboxState::default();
    let known = known.unwrap_or(&empty);
    if known.uid_validity != Some(status.uid_validity) {
        return MailboxPlan {
            reset: known.uid_validity.is_some() || !known.messages.is_empty(),
            fetch: listed,
            removed: known.messages.keys().copied().collect(),
        };
    }
    let on_server: BTreeSet<u32> = listed.iter().copied().collect();
    MailboxPlan {
        reset: false,
        fetch: listed
            .into_iter()
            .filter(|uid| known.messages.get(uid).is_none_or(|m| m.retry))
            .collect(),
        removed: known
            .messages
            .keys()
            .filter(|uid| !on_server.contains(uid))
            .copied()
            .collect(),
    }
}

/// One message read from the server: its UID and what the mail parser made of it (one event, or
/// a dead letter).
#[derive(Debug)]
pub struct FetchedMessage {
    /// The message's UID.
    pub uid: u32,
    /// Its event or its dead letter.
    pub scan: Scan,
}

/// What one sync found in one mailbox.
#[derive(Debug)]
pub struct MailboxSync {
    /// The mailbox name.
    pub mailbox: String,
    /// Its counters at the start of the sync.
    pub status: MailboxStatus,
    /// Whether its UIDVALIDITY changed: the state's UIDs are dropped.
    pub reset: bool,
    /// New UIDs, read.
    pub fetched: Vec<FetchedMessage>,
    /// UIDs gone from the server.
    pub removed: Vec<u32>,
}

/// Fold what the mailboxes gave into the events to publish and the next state.
///
/// A message whose source id was already published with the same version (from any followed
/// mailbox: a move, a copy, a UIDVALIDITY resync) is not published again; a source id that no
/// UID of any followed mailbox yields any more is tombstoned; a dead-lettered UID is remembered
/// so it is not read (and dead-lettered) again.
pub fn apply(
    state: &ImapState,
    tenant: &str,
    syncs: Vec<MailboxSync>,
    now: i64,
) -> (Scan, ImapState) {
    let published: BTreeMap<&String, &String> = state
        .mailboxes
        .values()
        .flat_map(|m| m.messages.values())
        // A refused message was not (wholly) published: reading it again publishes it.
        .filter(|m| !m.refused)
        .filter_map(|m| Some((m.source_id.as_ref()?, m.version.as_ref()?)))
        .collect();
    let mut next = state.clone();
    let mut dropped: BTreeSet<String> = BTreeSet::new();
    let mut upserts: Vec<SourceEvent> = Vec::new();
    let mut emitted: BTreeSet<(String, String)> = BTreeSet::new();
    let mut dead_letters = Vec::new();
    for sync in syncs {
        let mailbox = next.mailboxes.entry(sync.mailbox).or_default();
        if sync.reset {
            dropped.extend(
                std::mem::take(&mut mailbox.messages)
                    .into_values()
                    .flat_map(|m| m.source_id.into_iter().chain(m.attachments)),
            );
        }
        for uid in &sync.removed {
            if let Some(message) = mailbox.messages.remove(uid) {
                dropped.extend(message.source_id);
                dropped.extend(message.attachments);
            }
        }
        mailbox.uid_validity = Some(sync.status.uid_validity);
        mailbox.uid_next = sync.status.uid_next;
        for message in sync.fetched {
            dead_letters.extend(message.scan.dead_letters);
            // The message's event first, then one per attachment read as text.
            let mut events = message.scan.events.into_iter();
            let Some(event) = events.next() else {
                mailbox
                    .messages
                    .insert(message.uid, PublishedMessage::default());
                continue;
            };
            let attachments: Vec<SourceEvent> = events.collect();
            mailbox.messages.insert(
                message.uid,
                PublishedMessage {
                    source_id: Some(event.source_id.clone()),
                    version: Some(event.version.clone()),
                    attachments: attachments.iter().map(|a| a.source_id.clone()).collect(),
                    ..PublishedMessage::default()
                },
            );
            let known = published.get(&event.source_id) == Some(&&event.version);
            if !known && emitted.insert((event.source_id.clone(), event.version.clone())) {
                upserts.push(event);
                upserts.extend(attachments);
            }
        }
    }
    let live: BTreeSet<&String> = next
        .mailboxes
        .values()
        .flat_map(|m| m.messages.values())
        .flat_map(|m| m.source_id.iter().chain(&m.attachments))
        .collect();
    let attachment_ids: BTreeSet<&String> = state
        .mailboxes
        .values()
        .flat_map(|m| m.messages.values())
        .flat_map(|m| &m.attachments)
        .collect();
    let mut events: Vec<SourceEvent> = dropped
        .iter()
        .filter(|id| !live.contains(id))
        .map(|id| {
            let kind = if attachment_ids.contains(id) {
                SourceKind::Document
            } else {
                SourceKind::Email
            };
            SourceEvent::tombstone(tenant, kind, id, now)
        })
        .collect();
    events.extend(upserts);
    (
        Scan {
            events,
            dead_letters,
        },
        next,
    )
}

/// The result of one sync: what to publish, and the state to save once it is acknowledged.
#[derive(Debug)]
pub struct Sync {
    /// Tombstones first, then new messages; and dead letters.
    pub scan: Scan,
    /// The state after this sync.
    pub next: ImapState,
    /// Messages fetched (new UIDs).
    pub fetched: usize,
    /// UIDs gone from the server.
    pub removed: usize,
    /// Mailboxes whose UIDVALIDITY changed (read again from scratch).
    pub resynced: Vec<String>,
}

/// One sync of `mailboxes` over a logged-in session against the last `state`.
///
/// Each mailbox is opened read-only; when its UIDVALIDITY, UIDNEXT and message count are what
/// the state remembers, nothing else is asked. Otherwise its UIDs are listed, the new ones'
/// sizes fetched, messages over `mail.max_message_bytes` dead-lettered with their header only,
/// the others fetched with `BODY.PEEK[]` (they stay unread) and read with the mail parser.
pub async fn sync_mailboxes(
    session: &mut ImapSession,
    state: &ImapState,
    mailboxes: &[String],
    mail: &MailConfig,
    max_dead_letter_bytes: usize,
    now: i64,
) -> Result<Sync, SourceError> {
    let tenant = state.tenant.clone();
    check_tenant(&tenant)?;
    let mut syncs = Vec::new();
    let (mut fetched, mut removed, mut resynced) = (0, 0, Vec::new());
    for mailbox in mailboxes {
        let status = session.examine(mailbox).await?;
        let known = state.mailboxes.get(mailbox);
        if unchanged(known, &status) {
            continue;
        }
        let listed = session.uids().await?;
        let plan = plan(known, &status, &listed);
        let sizes = session.sizes(&plan.fetch).await?;
        let too_large = |size: &u32| u64::from(*size) > mail.max_message_bytes;
        let large: Vec<u32> = sizes
            .iter()
            .filter(|(_, s)| too_large(s))
            .map(|(uid, _)| *uid)
            .collect();
        let small: Vec<u32> = sizes
            .iter()
            .filter(|(_, s)| !too_large(s))
            .map(|(uid, _)| *uid)
            .collect();
        let bodies = session.messages(&small, false).await?;
        let headers = session.messages(&large, true).await?;
        let mut messages = Vec::new();
        for uid in &plan.fetch {
            let location = format!(
                "imap://{}/{mailbox};UIDVALIDITY={}/;UID={uid}",
                session.server(),
                status.uid_validity
            );
            let scan = if let Some(raw) = bodies.get(uid) {
                read_message(
                    raw,
                    &location,
                    &tenant,
                    mailbox,
                    mail,
                    max_dead_letter_bytes,
                    now,
                )
            } else if let (Some(header), Some(size)) = (headers.get(uid), sizes.get(uid)) {
                let reason = MailError::TooLarge {
                    size: u64::from(*size),
                    limit: mail.max_message_bytes,
                };
                dead_letter(
                    &reason.to_string(),
                    &location,
                    &tenant,
                    header,
                    max_dead_letter_bytes,
                )
            } else {
                // Expunged between the listing and the fetch.
                continue;
            };
            messages.push(FetchedMessage { uid: *uid, scan });
        }
        fetched += messages.len();
        removed += plan.removed.len();
        if plan.reset {
            tracing::info!(server = %session.server(), mailbox = %mailbox, uid_validity = status.uid_validity, "UIDVALIDITY changed: reading the mailbox again");
            resynced.push(mailbox.clone());
        }
        syncs.push(MailboxSync {
            mailbox: mailbox.clone(),
            status,
            reset: plan.reset,
            fetched: messages,
            removed: plan.removed,
        });
    }
    let (scan, next) = apply(state, &tenant, syncs, now);
    Ok(Sync {
        scan,
        next,
        fetched,
        removed,
        resynced,
    })
}

/// One message's bytes into its `EMAIL` event (exactly as `ingest eml` reads the same message:
/// same source id, same version), or a dead letter with the parser's reason.
pub fn read_message(
    raw: &[u8],
    location: &str,
    tenant: &str,
    mailbox: &str,
    mail: &MailConfig,
    max_dead_letter_bytes: usize,
    now: i64,
) -> Scan {
    match parse_message(raw, mail) {
        Ok(parsed) => {
            let events = parsed.into_events(tenant, mailbox, now, mail);
            let mut scan = Scan {
                events: vec![events.message],
                dead_letters: Vec::new(),
            };
            scan.events.extend(events.attachments);
            for (file, error) in events.unreadable {
                let location = format!("{location} attachment {} ({})", file.index, file.name);
                let letter = dead_letter(
                    &error.to_string(),
                    &location,
                    tenant,
                    &file.bytes,
                    max_dead_letter_bytes,
                );
                scan.dead_letters.extend(letter.dead_letters);
            }
            scan
        }
        Err(error) => dead_letter(
            &error.to_string(),
            location,
            tenant,
            raw,
            max_dead_letter_bytes,
        ),
    }
}

fn dead_letter(
    reason: &str,
    location: &str,
    tenant: &str,
    raw: &[u8],
    max_dead_letter_bytes: usize,
) -> Scan {
    Scan {
        events: Vec::new(),
        dead_letters: vec![DeadLetter::new(
            reason,
            "imap",
            Some(tenant),
            location,
            raw,
            max_dead_letter_bytes,
        )],
    }
}
