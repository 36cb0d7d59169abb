//! Whose fault a failure is, shared by every error type that crosses a process boundary
//! (sources, sinks, the query service), so callers decide retry and blame the same way.

/// Who is responsible for a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The input is wrong (a malformed file, a bad config value): fix the input.
    UserInput,
    /// A server (Kafka, Neo4j) or the file system failed: retrying may help.
    ExternalService,
    /// A bug in epigraph.
    Internal,
}

/// Milliseconds since the Unix epoch, now: the one place the wall clock is read in ms.
///
/// ```
/// assert!(epigraph_schemas::now_millis() > 1_700_000_000_000);
/// ```
pub fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}
