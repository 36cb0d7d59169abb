//! Whether the topics the query service writes to exist yet (docs/reliability.md#outages).
//!
//! The query service reads Neo4j and LanceDB; it writes to Kafka only for the webhook
//! (`POST /v1/ingest`), review actions and proposals. Kafka being down when it starts (a fresh
//! machine, a pod started before its broker) must not keep the reads from being served: the
//! server listens at once, creates the topics in the background — retrying with backoff and
//! saying why — and until they exist every write answers `503` at once with the reason (and
//! `Retry-After`) instead of waiting out the producer's 30 s. `/readyz` says so under
//! `writes`. Once Kafka has answered a write that fails is the producer's error, `503` too.
//!
//! ```
//! use epigraph::serve::topics::Topics;
//!
//! let topics = Topics::waiting("Kafka has not answered yet");
//! assert!(topics.writable().is_err());
//! topics.created();
//! assert!(topics.writable().is_ok());
//! assert_eq!(Topics::default().reason(), None);
//! ```

use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::http::StatusCode;
use epigraph_sources::kafka::{KafkaConfig, ensure_topics};
use tracing::{info, warn};

use super::ApiError;

/// How long the server waits for the topics before it listens anyway.
const FIRST_TRY: Duration = Duration::from_secs(5);
/// The longest pause between two tries.
const MOST_BETWEEN: Duration = Duration::from_secs(30);

/// The reason writes cannot be taken yet, `None` once the topics exist; shared by the desks,
/// the webhook and `/readyz`.
#[derive(Clone, Debug, Default)]
pub struct Topics {
    reason: Arc<RwLock<Option<String>>>,
}

/// A write refused while the topics are not there: `503` with the reason (and `Retry-After`,
/// as every `503` of the query service).
#[derive(Debug)]
pub struct NotWritable(pub String);

impl From<NotWritable> for ApiError {
    fn from(NotWritable(reason): NotWritable) -> Self {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "writes need Kafka, which has not answered since the server started: {reason}; \
                 retry later (the server creates its topics by itself once Kafka answers)"
            ),
        )
    }
}

impl Topics {
    /// Topics not created yet, for `reason`.
    pub fn waiting(reason: impl Into<String>) -> Self {
        Topics {
            reason: Arc::new(RwLock::new(Some(reason.into()))),
        }
    }

    /// Why writes cannot be taken now (`None`: they can).
    pub fn reason(&self) -> Option<String> {
        self.reason.read().expect("topics lock").clone()
    }

    /// `Ok` when the topics exist, else the refusal to answer with.
    pub fn writable(&self) -> Result<(), NotWritable> {
        match self.reason() {
            None => Ok(()),
            Some(reason) => Err(NotWritable(reason)),
        }
    }

    /// The topics exist: writes are taken from now on.
    pub fn created(&self) {
        *self.reason.write().expect("topics lock") = None;
    }

    fn failed(&self, reason: String) {
        *self.reason.write().expect("topics lock") = Some(reason);
    }

    /// Create the topics of `kafka`: waits up to 5 s for a first answer, and if Kafka does not
    /// give one keeps trying in the background (1 s, doubling to 30 s between tries), each
    /// failure logged with its reason. Never fails: the gate says whether writes are taken.
    pub async fn ensure(kafka: &KafkaConfig) -> Topics {
        let topics = Topics::waiting("creating the topics: Kafka has not answered yet");
        let first = tokio::time::timeout(FIRST_TRY, ensure_topics(kafka)).await;
        match first {
            Ok(Ok(())) => {
                topics.created();
                return topics;
            }
            Ok(Err(error)) => topics.failed(error.to_string()),
            Err(_) => topics.failed(format!(
                "creating the topics: no answer from Kafka ({}) within {} s",
                kafka.bootstrap,
                FIRST_TRY.as_secs()
            )),
        }
        warn!(
            reason = topics.reason().unwrap_or_default(),
            "Kafka does not answer: the query service serves reads, and answers writes 503 until \
             it has created its topics"
        );
        let gate = topics.clone();
        let kafka = kafka.clone();
        tokio::spawn(async move {
            let mut pause = Duration::from_secs(1);
            loop {
                tokio::time::sleep(pause).await;
                match ensure_topics(&kafka).await {
                    Ok(()) => {
                        info!("Kafka answers: the topics exist, writes are taken");
                        gate.created();
                        return;
                    }
                    Err(error) => {
                        warn!(%error, "creating the topics (is Kafka up?); trying again");
                        gate.failed(error.to_string());
                    }
                }
                pause = (pause * 2).min(MOST_BETWEEN);
            }
        });
        topics
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_write_says_why_and_when_to_retry() {
        use axum::response::IntoResponse;
        let topics = Topics::waiting("connection refused");
        let response = ApiError::from(topics.writable().unwrap_err()).into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers()[axum::http::header::RETRY_AFTER], "5");
        let shared = topics.clone();
        shared.created();
        assert!(
            topics.writable().is_ok(),
            "the gate is shared by its clones"
        );
    }
}
