//! The query core's error: what was wrong with a request, what was not found, or which store
//! failed. Transports map it to their own codes (HTTP status, MCP error kinds) by [`Fault`].

pub use epigraph_schemas::Fault;

/// A failure answering a query.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// The request is invalid (an empty query, `k` out of range, an unknown type); the message
    /// says what to change.
    #[error("{0}")]
    Invalid(String),
    /// An `as_of` value could not be read.
    #[error(transparent)]
    Instant(#[from] InstantError),
    /// What the request names does not exist in the tenant.
    #[error("{0}")]
    NotFound(String),
    /// Neo4j refused or failed a read.
    #[error("neo4j: {context}: {source}")]
    Graph {
        /// What was being read.
        context: String,
        /// The driver's error.
        #[source]
        source: neo4rs::Error,
    },
    /// A row of the graph does not have the shape the reader expects (a schema drift).
    #[error("neo4j: {context}: bad row: {message}")]
    BadRow {
        /// What was being read.
        context: String,
        /// The decoder's complaint.
        message: String,
    },
    /// LanceDB or the embedder failed.
    #[error(transparent)]
    Store(#[from] epigraph_sinks::SinkError),
}

impl QueryError {
    /// Whose fault the failure is: [`Fault::UserInput`] for invalid requests and missing nodes.
    pub fn fault(&self) -> Fault {
        match self {
            QueryError::Invalid(_) | QueryError::Instant(_) | QueryError::NotFound(_) => {
                Fault::UserInput
            }
            QueryError::Graph { .. } => Fault::ExternalService,
            QueryError::BadRow { .. } => Fault::Internal,
            QueryError::Store(error) => error.fault(),
        }
    }

    /// An invalid request, with the sentence that says why.
    pub fn invalid(message: impl Into<String>) -> Self {
        QueryError::Invalid(message.into())
    }

    pub(crate) fn graph(context: &str) -> impl FnOnce(neo4rs::Error) -> Self + '_ {
        move |source| QueryError::Graph {
            context: context.to_string(),
            source,
        }
    }
}

/// An `as_of` value that is neither milliseconds, an RFC 3339 instant nor a date.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InstantError {
    /// The text matches none of the accepted forms.
    #[error(
        "as_of {0:?} is neither milliseconds since the epoch, an RFC 3339 instant nor a YYYY-MM-DD date"
    )]
    Unreadable(String),
    /// A date beyond what the calendar can represent.
    #[error("date {0:?} is out of range")]
    OutOfRange(String),
}
