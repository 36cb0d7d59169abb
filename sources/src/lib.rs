//! The sources of epigraph: everything that reads an organisation's files and publishes them to
//! Kafka, and the Kafka client that the pipeline consumes with. Nothing here links a store
//! (LanceDB, Neo4j) or a model: a data team's connector builds without them.
//!
//! Map of the crate (one folder per component; each has a `config.rs` whose struct is the
//! user documentation of that component):
//! - [`kafka`]: topic administration, the event producer (with the dead-letter path) and the
//!   event consumer used by `epigraph run`.
//! - [`docs`]: the documents source (Markdown, text, HTML in a folder), with its manifest of what
//!   was published so removed files become tombstones.
//! - [`formats`]: the readers of binary document formats (PDF, DOCX, PPTX, XLSX) into text,
//!   for the documents source and for e-mail attachments.
//! - [`mail`]: the e-mail source (mbox, `.eml`, maildir): MIME decoding, quote and signature
//!   stripping, threads and attachment metadata.
//! - [`ics`]: the calendar source (iCalendar files): recurrences expanded in a window, overrides,
//!   cancellations as tombstones, organizer and attendees.
//! - [`caldav`]: the CalDAV source: follows a calendar collection on a server (sync tokens,
//!   only changes fetched), read with the iCalendar reader; removed objects become tombstones.
//! - [`imap`]: the IMAP source: follows mailboxes on a mail server (UIDVALIDITY/UID bookkeeping,
//!   each message read once with the mail parser); expunged messages become tombstones.
//! - [`beir`]: the BEIR corpus source (`corpus.jsonl`), for the retrieval evaluation.
//! - [`slack`]: the Slack source (an unzipped workspace export: one event per message).
//! - [`topic`]: topics produced by others (Kafka Connect, Debezium): records mapped to events by
//!   a declarative `[[sources.topic]]` entry.
//! - [`scan`]: what one pass over a source yields (events and dead letters).
//! - [`source`]: the [`Source`] trait every one-pass export reader implements (Slack, mbox,
//!   `.eml`, maildir, iCalendar, BEIR), so the CLI publishes them all one way.
//! - [`error`]: the typed error shared by all of them, which says whose fault a failure is.

pub mod beir;
pub mod caldav;
pub mod docs;
pub mod error;
pub mod formats;
pub(crate) mod html;
pub mod ics;
pub mod imap;
pub mod kafka;
pub mod mail;
pub mod scan;
pub mod slack;
pub mod source;
pub mod topic;

#[cfg(test)]
mod testing;

pub use epigraph_schemas::now_millis;
pub use error::{Fault, SourceError};
pub use scan::Scan;
pub use source::Source;
