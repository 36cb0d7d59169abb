use epigraph_schemas::SourceKind;
use serde::{Deserialize, Serialize};

/// How epigraph reaches Kafka and shapes its topics.
///
/// ```toml
/// [kafka]
/// bootstrap = "127.0.0.1:9092"
/// partitions = 1
///
/// [kafka.schema_registry]          # optional: the registry wire format instead of single-object
/// url = "http://127.0.0.1:8081/apis/ccompat/v7"
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KafkaConfig {
    /// Bootstrap servers, comma separated. Default `127.0.0.1:9092` (the local script's broker).
    pub bootstrap: String,
    /// Partitions of each event topic when epigraph creates it. Default 1.
    pub partitions: i32,
    /// Replication factor of created topics. Default 1 (one broker).
    pub replication: i32,
    /// Consumer group of `epigraph run`; offsets are committed there after both sinks acknowledged
    /// an epoch. Default `epigraph-run`.
    pub group_id: String,
    /// Producer linger in milliseconds: how long to wait to fill a batch. Default 20.
    pub linger_ms: u32,
    /// Producer compression codec (`none`, `gzip`, `snappy`, `lz4`). Default `lz4`.
    pub compression: String,
    /// Largest raw payload kept in a dead letter, in bytes. Default 65536.
    pub dead_letter_max_bytes: usize,
    /// Largest encoded event published, in bytes: the producer's `message.max.bytes` and the
    /// `max.message.bytes` of the event topics epigraph creates. A larger event is dead-lettered
    /// with its size and this limit, as is one a topic created with a smaller limit refuses.
    /// Default 16777216 (16 MiB: a document at the documents source's 10 MiB cap fits).
    pub max_message_bytes: usize,
    /// Raise `max.message.bytes` of event topics that exist with a smaller limit (made by an
    /// older version, by hand, or with a smaller `max_message_bytes`) to `max_message_bytes`
    /// when epigraph starts; their other settings are kept. Default true; false leaves existing
    /// topics alone (an event one of them refuses is then dead-lettered with the command that
    /// raises its limit).
    pub raise_topic_limits: bool,
    /// Prefix of every topic name: `<prefix>.events.<kind>`, `<prefix>.dlq`,
    /// `<prefix>.feedback`. Default `epigraph`; another prefix keeps a second deployment (or a
    /// benchmark) apart on the same cluster.
    pub topic_prefix: String,
    /// A Confluent-compatible schema registry (`[kafka.schema_registry]`). Off by default:
    /// events are then Avro single-object encoded, with no registry.
    pub schema_registry: SchemaRegistryConfig,
}

/// A Confluent-compatible schema registry (Confluent Schema Registry, Apicurio's
/// `/apis/ccompat/v7`, Karapace, …). When `url` is set, producers register the `.avsc`
/// contracts (the envelope under `<topic>-value`, each per-kind record under its full name,
/// referenced by the envelope; compatibility `BACKWARD`) and write the registry wire format
/// (`0` + 4-byte schema id + Avro datum); consumers read both that and single-object encoding,
/// fetching the schema of an id they have not seen from the registry.
/// Environment: `EPIGRAPH_KAFKA__SCHEMA_REGISTRY__URL`, `EPIGRAPH_KAFKA__SCHEMA_REGISTRY__TIMEOUT_MS`.
///
/// ```
/// use epigraph_sources::kafka::SchemaRegistryConfig;
/// assert!(!SchemaRegistryConfig::default().enabled());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SchemaRegistryConfig {
    /// Base URL of the Confluent-compatible API, e.g. `http://127.0.0.1:8081/apis/ccompat/v7`
    /// (what `deploy/local/services.sh up` runs) or `http://registry:8081` for Confluent's own.
    /// Empty (the default): no registry.
    pub url: String,
    /// Timeout of one request to the registry, in milliseconds. Default 10000.
    pub timeout_ms: u64,
}

impl SchemaRegistryConfig {
    /// Whether a registry is configured.
    pub fn enabled(&self) -> bool {
        !self.url.trim().is_empty()
    }
}

impl Default for SchemaRegistryConfig {
    fn default() -> Self {
        SchemaRegistryConfig {
            url: String::new(),
            timeout_ms: 10_000,
        }
    }
}

impl KafkaConfig {
    /// The event topic of one source kind.
    ///
    /// ```
    /// use epigraph_sources::kafka::KafkaConfig;
    /// use epigraph_schemas::SourceKind;
    /// assert_eq!(KafkaConfig::default().events_topic(SourceKind::Chat), "epigraph.events.chat");
    /// ```
    pub fn events_topic(&self, kind: SourceKind) -> String {
        format!("{}.events.{}", self.topic_prefix, kind.as_str())
    }

    /// All event topics, in schema order.
    pub fn all_event_topics(&self) -> Vec<String> {
        SourceKind::ALL
            .iter()
            .map(|k| self.events_topic(*k))
            .collect()
    }

    /// The dead-letter topic.
    pub fn dlq_topic(&self) -> String {
        format!("{}.dlq", self.topic_prefix)
    }

    /// The replay marks of the dead-letter topic (compacted, key `<partition>@<offset>` of a
    /// letter): which letters `epigraph dlq replay` re-submitted, and how it went, so that a
    /// letter is replayed once.
    ///
    /// ```
    /// use epigraph_sources::kafka::KafkaConfig;
    /// assert_eq!(KafkaConfig::default().dlq_replays_topic(), "epigraph.dlq.replays");
    /// ```
    pub fn dlq_replays_topic(&self) -> String {
        format!("{}.dlq.replays", self.topic_prefix)
    }

    /// The feedback topic.
    pub fn feedback_topic(&self) -> String {
        format!("{}.feedback", self.topic_prefix)
    }

    /// The change-notice topic: after each epoch written to the stores, `epigraph run` says
    /// which tenants changed (key: the tenant), so live readers (the dashboard feed) refresh
    /// without polling.
    pub fn changes_topic(&self) -> String {
        format!("{}.changes", self.topic_prefix)
    }

    /// Priority samples (`PrioritySample`, K's history): `<prefix>.priorities`.
    pub fn priorities_topic(&self) -> String {
        format!("{}.priorities", self.topic_prefix)
    }

    /// Connector status reports ([`super::ConnectorStatus`], JSON), compacted by connector:
    /// what the source followers say of themselves, for the health page.
    ///
    /// ```
    /// use epigraph_sources::kafka::KafkaConfig;
    /// assert_eq!(KafkaConfig::default().connectors_topic(), "epigraph.connectors");
    /// ```
    pub fn connectors_topic(&self) -> String {
        format!("{}.connectors", self.topic_prefix)
    }

    /// Proposals (`ProposalRecord`s, the audit trail of governed writes): `<prefix>.proposals`,
    /// kept forever.
    pub fn proposals_topic(&self) -> String {
        format!("{}.proposals", self.topic_prefix)
    }
}

impl Default for KafkaConfig {
    fn default() -> Self {
        KafkaConfig {
            bootstrap: "127.0.0.1:9092".into(),
            partitions: 1,
            replication: 1,
            group_id: "epigraph-run".into(),
            linger_ms: 20,
            compression: "lz4".into(),
            dead_letter_max_bytes: 64 * 1024,
            max_message_bytes: 16 * 1024 * 1024,
            raise_topic_limits: true,
            topic_prefix: "epigraph".into(),
            schema_registry: SchemaRegistryConfig::default(),
        }
    }
}
