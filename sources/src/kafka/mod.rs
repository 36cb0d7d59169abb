//! Kafka: topic administration, the event producer with its dead-letter path, and the consumer.

mod admin;
mod config;
mod consumer;
mod dead_letter;
mod producer;

pub use admin::{delete_topics, ensure_topics};
pub use config::KafkaConfig;
pub use consumer::{EventConsumer, Polled, RawMessage};
pub use dead_letter::DeadLetter;
pub use producer::{EventProducer, PublishReport};
