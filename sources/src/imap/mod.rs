//! The IMAP source: follow mailboxes on a mail server, reading every message once.
//!
//! - **UID bookkeeping**: per followed mailbox the state keeps its UIDVALIDITY, its UIDNEXT and
//!   every UID read with the event it gave. A sync opens each mailbox read-only (`EXAMINE`);
//!   when UIDVALIDITY, UIDNEXT and the message count are unchanged nothing more is asked,
//!   otherwise `UID SEARCH ALL` is compared with the state: new UIDs are fetched
//!   (`BODY.PEEK[]`, so they stay unread), vanished UIDs are removals. Polling, no IDLE.
//! - **Reading**: each message goes through the mail parser ([`crate::mail`]), so a message
//!   read from the server and the same message exported to `.eml` or mbox have the same source
//!   id (`mail/<Message-ID>`) and thread; the `mailbox` extra is the IMAP mailbox name.
//! - **Deletes and moves**: a source id that no UID of any followed mailbox yields any more is
//!   tombstoned; a message moved (or copied) to another followed mailbox stays live and is not
//!   published again (same source id, same version). A move to a mailbox that is not followed
//!   is a delete.
//! - **UIDVALIDITY changes**: the mailbox is read again from scratch; only messages whose
//!   version was not published are published, and those no longer there are tombstoned.
//! - **Restarts**: the state ([`ImapState`], one file per tenant, server and user) is saved only
//!   after Kafka acknowledged the events, so a crash re-reads and nothing is lost; nothing is
//!   published twice.
//! - **Bad messages**: over `mail.max_message_bytes` (by `RFC822.SIZE`, never downloaded),
//!   truncated or not an e-mail become dead letters located at
//!   `imap://host:port/<mailbox>;UIDVALIDITY=<v>/;UID=<uid>`, once.
//! - **Credentials** come from `[imap]` or `EPIGRAPH_IMAP__PASSWORD` and never appear in logs,
//!   errors or `Debug` output (async-imap's trace of `LOGIN` is silenced while logging in);
//!   `tls = "implicit"` (default) or `"starttls"` check the server's certificate against the
//!   system's roots; `"none"` is for a loopback server.

mod client;
mod config;
mod source;
mod state;

pub use client::{ImapError, ImapSession, ImapStream, MailboxStatus, uid_set};
pub use config::{ImapConfig, ImapTls};
pub use source::{
    FetchedMessage, MailboxPlan, MailboxSync, Sync, apply, plan, read_message, sync_mailboxes,
    unchanged,
};
pub use state::{ImapState, MailboxState, PublishedMessage};

#[cfg(test)]
mod tests;
