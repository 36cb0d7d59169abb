//! The sources' error type: every variant knows whose fault it is and whether a retry helps.

use std::path::PathBuf;

pub use epigraph_schemas::Fault;

/// A failure in a source or in the Kafka client.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// Kafka refused or failed an operation.
    #[error("kafka: {context}: {source}")]
    Kafka {
        /// What was being done.
        context: String,
        /// The client's error.
        #[source]
        source: rdkafka::error::KafkaError,
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
    /// A configuration value is invalid.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// An item could not be encoded into its schema.
    #[error("encoding: {0}")]
    Codec(#[from] epigraph_schemas::CodecError),
    /// The schema registry (`[kafka.schema_registry]`) could not be used.
    #[error(transparent)]
    Registry(#[from] crate::kafka::RegistryError),
    /// A CalDAV server could not be used.
    #[error(transparent)]
    Caldav(#[from] crate::caldav::CaldavError),
    /// An IMAP server could not be used.
    #[error(transparent)]
    Imap(#[from] crate::imap::ImapError),
}

impl SourceError {
    /// Whose fault the failure is.
    pub fn fault(&self) -> Fault {
        match self {
            SourceError::Kafka { .. } | SourceError::Io { .. } => Fault::ExternalService,
            SourceError::Config(_) => Fault::UserInput,
            SourceError::Codec(_) => Fault::Internal,
            SourceError::Registry(error) if error.is_user_error() => Fault::UserInput,
            SourceError::Registry(_) => Fault::ExternalService,
            SourceError::Caldav(error) if error.retryable() => Fault::ExternalService,
            SourceError::Caldav(crate::caldav::CaldavError::Multistatus { .. }) => {
                Fault::ExternalService
            }
            SourceError::Caldav(_) => Fault::UserInput,
            SourceError::Imap(error) if error.retryable() => Fault::ExternalService,
            SourceError::Imap(_) => Fault::UserInput,
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
        move |source| SourceError::Kafka { context, source }
    }

    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| SourceError::Io { path, source }
    }
}

/// The message of a caught panic (`catch_unwind`'s payload), for the dead letter of an item a
/// parser panicked on.
pub(crate) fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic without a message".to_string())
}
