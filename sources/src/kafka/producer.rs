use std::sync::Arc;
use std::time::Duration;

use epigraph_schemas::codec::encode_registry_framed;
use epigraph_schemas::{SourceEvent, encode_event};
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use rdkafka::ClientConfig;
use rdkafka::producer::{FutureProducer, FutureRecord, Producer};
use rdkafka::types::RDKafkaErrorCode;
use tracing::warn;

use super::{DeadLetter, KafkaConfig, RegistryCodec};
use crate::SourceError;

/// How many sends may wait for their delivery report at once.
const MAX_IN_FLIGHT: usize = 10_000;

/// Kafka's default message limit, about 1 MB (the broker's `message.max.bytes` is 1,048,588).
const BROKER_DEFAULT_MAX_BYTES: usize = 1_000_000;

/// Bytes of a produce request beyond the payload (key, headers, record batch framing).
const MESSAGE_OVERHEAD: usize = 64 * 1024;

/// What the dead letter of an event a topic refuses for its size needs. The body is kept only
/// for events over a broker's default limit (1 MB), so that 10,000 sends in flight hold no
/// copies; a smaller event refused by a topic with a smaller limit is dead-lettered without it.
struct Refusable {
    tenant: String,
    source_id: String,
    /// Encoded size.
    size: usize,
    /// The body, cut at `kafka.dead_letter_max_bytes` (empty for an event under 1 MB).
    raw: Vec<u8>,
    /// The body's size before cutting.
    body_size: usize,
}

/// What one publishing run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PublishReport {
    /// Events acknowledged by the broker.
    pub published: usize,
    /// Items sent to the dead-letter topic.
    pub dead_lettered: usize,
    /// Source ids of the events dead-lettered instead of published (schema, size, a topic's
    /// refusal): a manifest must not record them as published, so that the next read of the
    /// source sends them again once the cause is fixed.
    pub refused: Vec<String>,
}

/// Publishes source events (keyed `<tenant>/<source_id>`) to their kind's topic, and dead
/// letters to `epigraph.dlq`. Idempotent, compressed, batched. Events are Avro single-object
/// encoded, or in the schema registry's wire format when `[kafka.schema_registry] url` is set
/// (the contracts are then registered before the first event of each topic is sent).
pub struct EventProducer {
    producer: FutureProducer,
    config: KafkaConfig,
    registry: Option<Arc<RegistryCodec>>,
}

impl std::fmt::Debug for EventProducer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventProducer")
            .field("bootstrap", &self.config.bootstrap)
            .finish()
    }
}

impl EventProducer {
    /// Connect a producer (nothing is sent until [`publish`](Self::publish)).
    pub fn new(config: &KafkaConfig) -> Result<Self, SourceError> {
        let producer: FutureProducer = ClientConfig::new()
            .set("bootstrap.servers", &config.bootstrap)
            .set("enable.idempotence", "true")
            .set("compression.type", &config.compression)
            .set("linger.ms", config.linger_ms.to_string())
            .set("message.timeout.ms", "30000")
            .set("queue.buffering.max.messages", "200000")
            // Room for the largest event plus the protocol's framing.
            .set(
                "message.max.bytes",
                (config.max_message_bytes + MESSAGE_OVERHEAD).to_string(),
            )
            .create()
            .map_err(SourceError::kafka("creating the producer"))?;
        Ok(EventProducer {
            producer,
            config: config.clone(),
            registry: RegistryCodec::from_config(config)?,
        })
    }

    /// The registry codec, when a registry is configured (share it with an
    /// [`EventDecoder`](super::EventDecoder): one cache of writer schemas).
    pub fn registry(&self) -> Option<&Arc<RegistryCodec>> {
        self.registry.as_ref()
    }

    /// Encode an event for its topic: the registry wire format when a registry is configured
    /// (registering the contracts first), single-object encoding otherwise. The outer error is
    /// the registry's (unreachable, incompatible contract); the inner one the event's.
    pub async fn encode(
        &self,
        event: &SourceEvent,
    ) -> Result<Result<Vec<u8>, epigraph_schemas::CodecError>, SourceError> {
        match &self.registry {
            Some(codec) => {
                let id = codec
                    .register_contracts(&self.config.events_topic(event.source_kind))
                    .await?;
                Ok(encode_registry_framed(id, event))
            }
            None => Ok(encode_event(event)),
        }
    }

    /// Publish events and wait until every one is acknowledged. `on_progress` is called with the
    /// number of acknowledged events as they arrive. An event that cannot be encoded is dead
    /// lettered; a broker or registry failure is an error (the caller must not record the events
    /// as sent).
    pub async fn publish(
        &self,
        events: impl IntoIterator<Item = SourceEvent>,
        mut on_progress: impl FnMut(usize),
    ) -> Result<PublishReport, SourceError> {
        let mut report = PublishReport::default();
        let mut in_flight = FuturesUnordered::new();
        for mut event in events {
            event.fill_record();
            let payload = match self.encode(&event).await? {
                Ok(payload) => payload,
                Err(error) => {
                    let reason = format!("event does not fit the schema: {error}");
                    self.refuse(&event, &reason, &mut report).await?;
                    continue;
                }
            };
            if payload.len() > self.config.max_message_bytes {
                let reason = format!(
                    "event is {} bytes encoded, over the {} byte limit (kafka.max_message_bytes)",
                    payload.len(),
                    self.config.max_message_bytes
                );
                self.refuse(&event, &reason, &mut report).await?;
                continue;
            }
            let topic = self.config.events_topic(event.source_kind);
            let key = event.key();
            let refusable = Refusable {
                tenant: event.tenant.clone(),
                source_id: event.source_id.clone(),
                size: payload.len(),
                raw: if payload.len() > BROKER_DEFAULT_MAX_BYTES {
                    event.body.as_bytes()[..event.body.len().min(self.config.dead_letter_max_bytes)]
                        .to_vec()
                } else {
                    Vec::new()
                },
                body_size: event.body.len(),
            };
            in_flight.push(async move {
                let record = FutureRecord::to(&topic).key(&key).payload(&payload);
                let sent = self
                    .producer
                    .send(record, Duration::from_secs(30))
                    .await
                    .map_err(|(e, _)| e);
                (sent, refusable, topic)
            });
            if in_flight.len() >= MAX_IN_FLIGHT {
                self.settle_one(&mut in_flight, &mut report, &mut on_progress)
                    .await?;
            }
        }
        while !in_flight.is_empty() {
            self.settle_one(&mut in_flight, &mut report, &mut on_progress)
                .await?;
        }
        Ok(report)
    }

    async fn settle_one<F>(
        &self,
        in_flight: &mut FuturesUnordered<F>,
        report: &mut PublishReport,
        on_progress: &mut impl FnMut(usize),
    ) -> Result<(), SourceError>
    where
        F: Future<
            Output = (
                Result<rdkafka::producer::future_producer::Delivery, rdkafka::error::KafkaError>,
                Refusable,
                String,
            ),
        >,
    {
        let Some((result, event, topic)) = in_flight.next().await else {
            return Ok(());
        };
        match result {
            Ok(_) => {
                report.published += 1;
                on_progress(report.published);
            }
            // A topic created with a smaller limit (the broker's 1 MB default, or by an earlier
            // version of epigraph) refuses the event: it is dead-lettered, the rest goes on.
            Err(rdkafka::error::KafkaError::MessageProduction(
                RDKafkaErrorCode::MessageSizeTooLarge,
            )) => {
                let mut letter = DeadLetter::new(
                    &format!(
                        "event is {} bytes encoded and {topic} refuses it as too large: raise the \
                         topic's max.message.bytes (kafka-configs.sh --alter --entity-type topics \
                         --entity-name {topic} --add-config max.message.bytes={}, or let epigraph \
                         raise it to kafka.max_message_bytes: kafka.raise_topic_limits = true), \
                         then read the source again",
                        event.size,
                        event.size.next_power_of_two()
                    ),
                    "producer",
                    Some(&event.tenant),
                    &event.source_id,
                    &event.raw,
                    self.config.dead_letter_max_bytes,
                );
                letter.raw_size = event.body_size;
                self.dead_letter(&letter).await?;
                report.dead_lettered += 1;
                report.refused.push(event.source_id.clone());
            }
            Err(error) => return Err(SourceError::kafka("publishing an event")(error)),
        }
        Ok(())
    }

    /// Dead-letter an event that will not be published, with the reason, and count it.
    async fn refuse(
        &self,
        event: &SourceEvent,
        reason: &str,
        report: &mut PublishReport,
    ) -> Result<(), SourceError> {
        let letter = DeadLetter::new(
            reason,
            "producer",
            Some(&event.tenant),
            &event.source_id,
            event.body.as_bytes(),
            self.config.dead_letter_max_bytes,
        );
        self.dead_letter(&letter).await?;
        report.dead_lettered += 1;
        report.refused.push(event.source_id.clone());
        Ok(())
    }

    /// Publish one dead letter (JSON) and wait for the acknowledgement; returns its
    /// `(partition, offset)` on the dead-letter topic.
    pub async fn dead_letter(&self, letter: &DeadLetter) -> Result<(i32, i64), SourceError> {
        warn!(reason = %letter.reason, location = %letter.location, "dead-lettered an item");
        let payload = serde_json::to_vec(letter).expect("dead letters serialize");
        let key = letter.tenant.clone().unwrap_or_default();
        let delivery = self
            .producer
            .send(
                FutureRecord::to(&self.config.dlq_topic())
                    .key(&key)
                    .payload(&payload),
                Duration::from_secs(30),
            )
            .await
            .map_err(|(e, _)| e)
            .map_err(SourceError::kafka("publishing a dead letter"))?;
        Ok((delivery.partition, delivery.offset))
    }

    /// Publish raw bytes under a key (for replaying dead letters and for tests of bad input);
    /// returns `(partition, offset)` once acknowledged.
    pub async fn publish_raw(
        &self,
        topic: &str,
        key: &str,
        payload: &[u8],
    ) -> Result<(i32, i64), SourceError> {
        let delivery = self
            .producer
            .send(
                FutureRecord::to(topic).key(key).payload(payload),
                Duration::from_secs(30),
            )
            .await
            .map_err(|(e, _)| e)
            .map_err(SourceError::kafka(format!("publishing to {topic}")))?;
        Ok((delivery.partition, delivery.offset))
    }

    /// Publish a tombstone (a null payload) under a key: on a compacted topic it removes the
    /// key's record (a withdrawn verdict, a deleted item).
    pub async fn publish_tombstone(&self, topic: &str, key: &str) -> Result<(), SourceError> {
        self.producer
            .send(
                FutureRecord::<str, [u8]>::to(topic).key(key),
                Duration::from_secs(30),
            )
            .await
            .map_err(|(e, _)| e)
            .map_err(SourceError::kafka(format!(
                "publishing a tombstone to {topic}"
            )))?;
        Ok(())
    }

    /// Wait until everything queued is delivered.
    pub fn flush(&self) -> Result<(), SourceError> {
        self.producer
            .flush(Duration::from_secs(30))
            .map_err(SourceError::kafka("flushing the producer"))
    }
}
