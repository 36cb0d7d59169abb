//! The contracts of epigraph: the Avro schemas of the events that connectors publish to Kafka.
//!
//! Map of the crate:
//! - [`event`]: the Rust types of the envelope ([`SourceEvent`], [`Party`], [`Link`]).
//! - [`records`]: the per-kind records (chat message, e-mail, calendar event, document).
//! - [`codec`]: Avro single-object encoding (marker `C3 01` + the writer schema's 64-bit Rabin
//!   fingerprint + the datum) and decoding that resolves the writer schema against the reader's.
//! - [`topics`]: topic names and the Kafka key format shared by producers and consumers.
//! - [`feedback`], [`changes`]: the feedback topic's records and the change notices.
//! - [`graph`]: the graph schema in Neo4j (labels, properties, retired statuses), shared by
//!   the pipeline's writer and the query core's reads.
//! - [`memory`]: the memory objects' vocabulary — the nine epistemic types and standings —
//!   shared by the writer and the readers.
//! - [`calendar`]: days, months and the periods date values cover, in UTC.
//! - [`fault`]: whose fault a failure is ([`Fault`]), and the wall clock in ms ([`now_millis`]).
//!
//! The `.avsc` files under `avsc/` are the source of truth; the Rust types mirror them and the
//! tests round-trip every record and read data written with every previous schema version.

pub mod bounded;
pub mod calendar;
pub mod changes;
pub mod codec;
pub mod event;
pub mod fault;
pub mod feedback;
pub mod graph;
pub mod memory;
pub mod proposals;
pub mod records;
pub mod topics;

pub use codec::{CodecError, decode_event, encode_event, schema_files};

/// The folder of the package whose code is running, for tests that read the repository's
/// fixtures: `CARGO_MANIFEST_DIR` as `cargo test` (or `deploy/local/run_tests.py`) sets it
/// when it runs a test, else the folder the calling crate was compiled in. Reading it at run
/// time matters when one target folder serves several checkouts: an executable compiled in
/// one and reused by another would otherwise read the first checkout's fixtures.
///
/// ```
/// let dir = epigraph_schemas::manifest_dir!();
/// assert!(dir.join("Cargo.toml").is_file());
/// ```
#[macro_export]
macro_rules! manifest_dir {
    () => {
        ::std::path::PathBuf::from(
            ::std::env::var_os("CARGO_MANIFEST_DIR")
                .unwrap_or_else(|| ::std::ffi::OsString::from(env!("CARGO_MANIFEST_DIR"))),
        )
    };
}
pub use event::{Link, Op, Party, SourceEvent, SourceKind};
pub use fault::{Fault, now_millis};
pub use records::{Attendee, CalendarEvent, ChatMessage, DocumentFile, EmailMessage};
