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
}

impl SinkError {
    /// Whose fault the failure is.
    pub fn fault(&self) -> Fault {
        match self {
            SinkError::Neo4j { .. } | SinkError::Io { .. } => Fault::ExternalService,
            SinkError::Lance { .. } => Fault::ExternalService,
            SinkError::Model(_) | SinkError::Config(_) => Fault::UserInput,
            SinkError::Codec(_) => Fault::Internal,
        }
    }

    /// Whether retrying the same operation may succeed.
    pub fn retryable(&self) -> bool {
        self.fault() == Fault::ExternalService
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
