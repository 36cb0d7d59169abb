//! The connectors' error type: every variant knows whose fault it is and whether a retry helps.

use std::path::PathBuf;

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

/// A failure in a connector, sink or embedder.
#[derive(Debug, thiserror::Error)]
pub enum ConnectorError {
    /// Kafka refused or failed an operation.
    #[error("kafka: {context}: {source}")]
    Kafka {
        /// What was being done.
        context: String,
        /// The client's error.
        #[source]
        source: rdkafka::error::KafkaError,
    },
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

impl ConnectorError {
    /// Whose fault the failure is.
    pub fn fault(&self) -> Fault {
        match self {
            ConnectorError::Kafka { .. }
            | ConnectorError::Neo4j { .. }
            | ConnectorError::Io { .. } => Fault::ExternalService,
            ConnectorError::Lance { .. } => Fault::ExternalService,
            ConnectorError::Model(_) | ConnectorError::Config(_) => Fault::UserInput,
            ConnectorError::Codec(_) => Fault::Internal,
        }
    }

    /// Whether retrying the same operation may succeed.
    pub fn retryable(&self) -> bool {
        self.fault() == Fault::ExternalService
    }

    pub(crate) fn kafka(
        context: impl Into<String>,
    ) -> impl FnOnce(rdkafka::error::KafkaError) -> Self {
        let context = context.into();
        move |source| ConnectorError::Kafka { context, source }
    }

    pub(crate) fn neo4j(context: impl Into<String>) -> impl FnOnce(neo4rs::Error) -> Self {
        let context = context.into();
        move |source| ConnectorError::Neo4j { context, source }
    }

    pub(crate) fn lance(context: impl Into<String>) -> impl FnOnce(lancedb::Error) -> Self {
        let context = context.into();
        move |source| ConnectorError::Lance { context, source }
    }

    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| ConnectorError::Io { path, source }
    }
}
