//! Kafka: topic administration, the event producer with its dead-letter path, the consumer, the
//! connectors' status reports, and the schema registry client (the registry wire format when `[kafka.schema_registry]` is set).

mod admin;
mod config;
mod consumer;
mod dead_letter;
mod health;
mod producer;
mod registry;

pub use admin::{delete_topics, ensure_topics};
pub use config::{KafkaConfig, SchemaRegistryConfig};
pub use consumer::{EventConsumer, Polled, RawMessage};
pub use dead_letter::DeadLetter;
pub use health::ConnectorStatus;
pub use producer::{EventProducer, PublishReport};
pub use registry::{
    EventDecodeError, EventDecoder, RegistryCodec, RegistryError, SchemaReference, SchemaRegistry,
    record_subject, value_subject,
};
