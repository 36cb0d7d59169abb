//! Topics produced by others: Kafka Connect, Debezium or an application writes a topic, and
//! `epigraph ingest topic <name>` follows it, mapping each record to a source event by the
//! declarative `[[sources.topic]]` entry ([`TopicSource`]) and publishing it like any other
//! connector.
//!
//! - **Formats**: JSON — Kafka Connect's `JsonConverter` with or without schemas (the
//!   `{"schema", "payload"}` wrapper is removed), or a `StringConverter` carrying JSON — and
//!   Avro in the registry wire format, its writer schema fetched from `[kafka.schema_registry]`.
//! - **Envelopes**: the value is the row (`none`), or Debezium's change event (`before`,
//!   `after`, `op`): `c`/`r`/`u` upsert `after`, `d` deletes `before`, `t`/`m` are skipped.
//!   A null value (Kafka tombstone) deletes the key's item either way.
//! - **Bad records** (not JSON, a field missing, an unknown op, a datum that does not fit its
//!   schema) become dead letters with the reason and the raw bytes; the rest goes on.
//! - **Restarts**: the offsets of the source topic are committed to the consumer group
//!   `<kafka.group_id>.topic.<name>` only after Kafka acknowledged the events (and dead letters)
//!   they produced: nothing is lost, a crash may publish a record's event twice (the pipeline
//!   drops a re-sent version).

mod config;
mod mapping;

pub use config::{ConfigError, Envelope, Format, TimeUnit, TopicSource};
pub use mapping::{
    BadRecord, Record, avro_to_json, decode_avro, decode_json, map_record, wire_frame,
};

#[cfg(test)]
mod tests;
