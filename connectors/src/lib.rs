//! The edges of epigraph: everything that talks to a file, a socket or a server.
//!
//! Map of the crate (one folder per component; each has a `config.rs` whose struct is the
//! user documentation of that component):
//! - [`kafka`]: topic administration, the event producer (with the dead-letter path) and the
//!   event consumer used by `epigraph run`.
//! - [`docs`]: the documents source (Markdown, text, HTML in a folder), with its manifest of what
//!   was published so removed files become tombstones.
//! - [`mail`]: the e-mail source (mbox, `.eml`, maildir): MIME decoding, quote and signature
//!   stripping, threads and attachment metadata.
//! - [`ics`]: the calendar source (iCalendar files): recurrences expanded in a window, overrides,
//!   cancellations as tombstones, organizer and attendees.
//! - [`beir`]: the BEIR corpus source (`corpus.jsonl`), for the retrieval evaluation.
//! - [`slack`]: the Slack source (an unzipped workspace export: one event per message).
//! - [`neo4j`]: the graph sink (batched `UNWIND … MERGE`/`DELETE`, one transaction per batch) and
//!   the reads used to reconcile it.
//! - [`lance`]: the LanceDB sink (`memory` table with full-text index and embeddings) and search.
//! - [`embed`]: all-MiniLM-L6-v2 in candle, the local sentence embedder.
//! - [`scan`]: what one pass over a source yields (events and dead letters).
//! - [`error`]: the typed error shared by all of them, which says whose fault a failure is.

pub mod beir;
pub mod docs;
pub mod embed;
pub mod error;
pub(crate) mod html;
pub mod ics;
pub mod kafka;
pub mod lance;
pub mod mail;
pub mod neo4j;
pub mod scan;
pub mod slack;

#[cfg(test)]
mod testing;

pub use error::{ConnectorError, Fault};
pub use scan::Scan;

/// Milliseconds since the Unix epoch, now.
pub fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}
