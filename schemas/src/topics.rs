//! Topic names and the key format shared by every producer and consumer.

use crate::SourceKind;

/// Prefix of the per-kind event topics: `epigraph.events.<kind>`.
pub const EVENTS_PREFIX: &str = "epigraph.events";
/// Dead-letter topic: items that could not be parsed or validated, with the reason.
pub const DLQ: &str = "epigraph.dlq";
/// Feedback topic: usage and review verdicts flowing back from the query service.
pub const FEEDBACK: &str = "epigraph.feedback";

/// The topic of one source kind.
///
/// ```
/// use epigraph_schemas::{SourceKind, topics::events_topic};
/// assert_eq!(events_topic(SourceKind::Email), "epigraph.events.email");
/// ```
pub fn events_topic(kind: SourceKind) -> String {
    format!("{EVENTS_PREFIX}.{}", kind.as_str())
}

/// All event topics, in schema order.
pub fn all_event_topics() -> Vec<String> {
    SourceKind::ALL.iter().map(|k| events_topic(*k)).collect()
}

/// The Kafka key of an item: `<tenant>/<source_id>`; a tenant name never contains `/`.
///
/// ```
/// assert_eq!(epigraph_schemas::topics::event_key("acme", "a/b.md"), "acme/a/b.md");
/// ```
pub fn event_key(tenant: &str, source_id: &str) -> String {
    format!("{tenant}/{source_id}")
}

/// Whether a tenant name is acceptable: 1–64 characters of `[A-Za-z0-9_.-]`.
///
/// Tenant names end up in keys, Cypher parameters and LanceDB filters, so they are kept simple.
///
/// ```
/// use epigraph_schemas::topics::valid_tenant;
/// assert!(valid_tenant("acme-eu.1"));
/// assert!(!valid_tenant("a/b") && !valid_tenant("") && !valid_tenant("x'; DROP"));
/// ```
pub fn valid_tenant(tenant: &str) -> bool {
    !tenant.is_empty()
        && tenant.len() <= 64
        && tenant
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}
