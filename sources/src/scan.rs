//! What a source connector produces from one read of its input.

use epigraph_schemas::SourceEvent;

use crate::SourceError;
use crate::kafka::DeadLetter;

/// Events to publish and items that could not be read, from one pass over a source.
///
/// Connectors never fail on a bad item: it becomes a [`DeadLetter`] with the reason, its
/// location (file, line or byte offset) and its raw bytes, and the rest is read on.
#[derive(Debug, Default)]
pub struct Scan {
    /// Well-formed items, normalised into events.
    pub events: Vec<SourceEvent>,
    /// Items that could not be parsed or validated.
    pub dead_letters: Vec<DeadLetter>,
}

impl Scan {
    /// Append another scan's events and dead letters.
    pub fn extend(&mut self, other: Scan) {
        self.events.extend(other.events);
        self.dead_letters.extend(other.dead_letters);
    }
}

/// Every source's first check: the tenant name is usable in keys, Cypher parameters and
/// LanceDB filters (see `epigraph_schemas::topics::valid_tenant`).
///
/// ```
/// use epigraph_sources::scan::check_tenant;
/// assert!(check_tenant("acme").is_ok());
/// assert!(check_tenant("a/b").unwrap_err().to_string().contains("must be 1-64"));
/// ```
pub fn check_tenant(tenant: &str) -> Result<(), SourceError> {
    if epigraph_schemas::topics::valid_tenant(tenant) {
        Ok(())
    } else {
        Err(SourceError::Config(format!(
            "tenant {tenant:?} must be 1-64 characters of letters, digits, '_', '-', '.'"
        )))
    }
}
