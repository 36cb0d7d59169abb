//! The sinks' error type: every variant knows whose fault it is and whether a retry helps.

use std::path::PathBuf;

pub use epigraph_schemas::Fault;

/// A failure in a sink (Neo4j, LanceDB) or the embedder.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    /// Neo4j refused or failed an operation.
    #[error("neo4j: {context}: {source}")]
    Neo4j {
        /// What was being done.
        context: String,
        /// The client's error.
        #[source]
        source: neo4rs::Error,
    },
    /// LanceDB failed an operation.
    #[error("lancedb: {context}: {source}")]
    Lance {
        /// What was being done.
        context: String,
        /// The library's error.
        #[source]
        source: lancedb::Error,
    },
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The embedding model could not be loaded or run.
    #[error("embedder: {0}")]
    Model(String),
    /// A configuration value is invalid.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// An item could not be encoded into its schema.
    #[error("encoding: {0}")]
    Codec(#[from] epigraph_schemas::CodecError),
    /// A pass of the background vector filler failed.
    #[error("filling vectors: {reason}")]
    Filler {
        /// The pass's error.
        reason: String,
        /// Whether it was an outage (a retry may succeed).
        retryable: bool,
    },
}

impl SinkError {
    /// Whose fault the failure is.
    pub fn fault(&self) -> Fault {
        match self {
            SinkError::Neo4j { .. } | SinkError::Io { .. } => Fault::ExternalService,
            SinkError::Lance { .. } => Fault::ExternalService,
            SinkError::Model(_) | SinkError::Config(_) => Fault::UserInput,
            SinkError::Codec(_) => Fault::Internal,
            SinkError::Filler {
                retryable: true, ..
            } => Fault::ExternalService,
            SinkError::Filler { .. } => Fault::Internal,
        }
    }

    /// Whether retrying the same operation may succeed: a store that is down, restarting or
    /// unreachable (connection refused or closed, a transient Neo4j error such as
    /// `DatabaseUnavailable`, a LanceDB folder that cannot be written), not a query the store
    /// refused or a value that does not encode.
    pub fn retryable(&self) -> bool {
        match self {
            SinkError::Neo4j { source, .. } => neo4j_transient(source),
            SinkError::Filler { retryable, .. } => *retryable,
            _ => self.fault() == Fault::ExternalService,
        }
    }

    pub(crate) fn neo4j(context: impl Into<String>) -> impl FnOnce(neo4rs::Error) -> Self {
        let context = context.into();
        move |source| SinkError::Neo4j { context, source }
    }

    pub(crate) fn lance(context: impl Into<String>) -> impl FnOnce(lancedb::Error) -> Self {
        let context = context.into();
        move |source| SinkError::Lance { context, source }
    }

    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| SinkError::Io { path, source }
    }
}

/// Whether a Neo4j client error says the server could not be reached or was not ready (a retry
/// may succeed), rather than that it refused the statement.
fn neo4j_transient(error: &neo4rs::Error) -> bool {
    use neo4rs::{Error, Neo4jClientErrorKind, Neo4jErrorKind};
    match error {
        Error::IOError { .. }
        | Error::ConnectionError
        | Error::IncompleteBoltExchange
        | Error::Ignored(_)
        | Error::RequestIgnoredError
        | Error::RoutingTableError(_)
        | Error::RoutingTableRefreshFailed(_)
        | Error::ServerUnavailableError(_)
        | Error::ConnectionTimedOut => true,
        Error::Neo4j(error) => matches!(
            error.kind(),
            Neo4jErrorKind::Transient
                | Neo4jErrorKind::Client(Neo4jClientErrorKind::SessionExpired)
        ),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_that_is_down_is_retried_a_refused_statement_is_not() {
        let down = SinkError::neo4j("writing")(neo4rs::Error::ConnectionError);
        assert!(down.retryable());
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        assert!(SinkError::neo4j("writing")(neo4rs::Error::IOError { detail: io }).retryable());
        let refused = SinkError::neo4j("writing")(neo4rs::Error::ConversionError);
        assert!(!refused.retryable());
        assert_eq!(refused.fault(), Fault::ExternalService);
        assert!(!SinkError::Config("x".into()).retryable());
        let path = SinkError::io("/lancedb")(std::io::Error::other("read-only"));
        assert!(path.retryable());
    }
}
