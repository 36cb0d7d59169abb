//! Following a Kafka topic from its beginning in the background: the review desk and the
//! dead-letter log of the query service are both a topic read into memory.

use std::time::Duration;

use epigraph_sources::kafka::{EventConsumer, KafkaConfig, Polled, RawMessage};

/// Read `topic` from its beginning, and on, calling `absorb` with each message's key (UTF-8,
/// lossy; empty without one) and message, in a background task. When Kafka cannot be read the
/// task logs why and starts again from the beginning 10 s later (`absorb` must be idempotent).
pub fn follow(
    kafka: KafkaConfig,
    topic: String,
    what: &'static str,
    absorb: impl Fn(&str, &RawMessage) + Send + Sync + 'static,
) {
    tokio::spawn(async move {
        loop {
            // Connecting reads the topic's metadata synchronously (up to 10 s while Kafka is
            // down): off the runtime's workers, or five followers retrying would hold both of
            // them and no request would be answered.
            let connect = {
                let (kafka, topic) = (kafka.clone(), topic.clone());
                tokio::task::spawn_blocking(move || {
                    EventConsumer::from_beginning(&kafka, std::slice::from_ref(&topic))
                })
            };
            match connect.await {
                Ok(Ok(consumer)) => loop {
                    match consumer.poll(Duration::from_secs(1)).await {
                        Ok(Polled::Message(message)) => {
                            let key = message
                                .key
                                .as_deref()
                                .map(String::from_utf8_lossy)
                                .unwrap_or_default()
                                .into_owned();
                            absorb(&key, &message);
                        }
                        Ok(Polled::Idle) => {}
                        Err(error) => {
                            tracing::warn!(%error, %topic, "reading {what}");
                            break;
                        }
                    }
                },
                Ok(Err(error)) => tracing::warn!(%error, %topic, "cannot read {what}"),
                Err(error) => tracing::error!(%error, %topic, "connecting to read {what} failed"),
            }
            tokio::time::sleep(Duration::from_secs(10)).await;
        }
    });
}
