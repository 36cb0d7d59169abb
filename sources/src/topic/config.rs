use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One topic that another system produces (Kafka Connect, Debezium, an application), and how
/// its records become source events. Declared as `[[sources.topic]]`, followed with
/// `epigraph ingest topic <name>`.
///
/// Fields are [JSON pointers](https://www.rfc-editor.org/rfc/rfc6901) into the record's value
/// (after the envelope is removed: Kafka Connect's `{"schema", "payload"}` wrapper always, and
/// Debezium's `before`/`after`/`op` with `envelope = "debezium"`). `source_id = "key"` takes the
/// Kafka key instead (its text, or the same pointer inside a JSON key).
///
/// ```toml
/// [[sources.topic]]
/// name = "crm-notes"                 # what `epigraph ingest topic crm-notes` follows
/// topic = "crm.public.notes"         # the topic as the other system names it (no prefix added)
/// tenant = "acme"
/// kind = "document"                  # chat | email | calendar | document
/// format = "json"                    # json (Connect's JsonConverter, with or without schemas,
///                                    # or StringConverter of JSON) | avro (registry wire format)
/// envelope = "debezium"              # none | debezium
/// source_id = "/id"
/// source_id_prefix = "crm/notes/"
/// title = "/subject"
/// body = "/text"
/// author = "/author"
/// occurred_at = "/updated_at"        # a number (see time_unit) or an RFC 3339 string
/// time_unit = "ms"                   # s | ms | us
/// thread_id = "/account_id"
/// extras = { status = "/status" }
/// ```
///
/// ```
/// use epigraph_sources::topic::{Envelope, TopicSource};
/// let source: TopicSource = serde_json::from_value(serde_json::json!({
///     "name": "crm-notes", "topic": "crm.notes", "tenant": "acme", "kind": "document",
///     "envelope": "debezium", "source_id": "/id", "body": "/text"
/// })).unwrap();
/// assert_eq!(source.envelope, Envelope::Debezium);
/// assert!(source.check().is_ok());
/// let bad = TopicSource { body: "text".into(), ..source };
/// assert!(bad.check().unwrap_err().to_string().contains("JSON pointer"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopicSource {
    /// The name `epigraph ingest topic` is called with; also names its consumer group
    /// (`<kafka.group_id>.topic.<name>`) so its offsets survive restarts.
    pub name: String,
    /// The topic to consume, exactly as the producing system names it.
    pub topic: String,
    /// Tenant every record belongs to.
    pub tenant: String,
    /// The kind of item: `chat`, `email`, `calendar` or `document`.
    pub kind: String,
    /// How values are encoded. Default `json`.
    #[serde(default)]
    pub format: Format,
    /// The envelope around the row. Default `none`.
    #[serde(default)]
    pub envelope: Envelope,
    /// Pointer to the item's id, or `key` for the Kafka key.
    pub source_id: String,
    /// Put in front of every source id (keeps the ids of two tables apart). Default empty.
    #[serde(default)]
    pub source_id_prefix: String,
    /// Pointer to the title. Default none.
    #[serde(default)]
    pub title: Option<String>,
    /// Pointer to the text. Required: a record without it is a dead letter.
    pub body: String,
    /// Pointer to the author (a name, an address, or `{name, address}`). Default none.
    #[serde(default)]
    pub author: Option<String>,
    /// Pointer to when the item was written. Default none: the record's Kafka timestamp.
    #[serde(default)]
    pub occurred_at: Option<String>,
    /// Unit of a numeric `occurred_at`. Default `ms`.
    #[serde(default)]
    pub time_unit: TimeUnit,
    /// Pointer to the thread or conversation id. Default none.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// More fields to keep, as `extras` name → pointer. Default none.
    #[serde(default)]
    pub extras: BTreeMap<String, String>,
}

/// How the topic's values are encoded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// JSON text: Kafka Connect's `JsonConverter` (with `schemas.enable` true or false) or a
    /// `StringConverter` carrying JSON.
    #[default]
    Json,
    /// Avro in the Confluent wire format (magic byte 0, schema id, datum); the writer schema is
    /// fetched from `[kafka.schema_registry]`.
    Avro,
}

/// The envelope around the row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Envelope {
    /// The value is the row; a null value (a Kafka tombstone) deletes the key's item.
    #[default]
    None,
    /// Debezium's change event: `op` `c`/`r`/`u` upsert `after`, `d` deletes `before`; a null
    /// value (the tombstone Debezium sends after a delete) deletes the key's item.
    Debezium,
}

/// Unit of a numeric timestamp.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeUnit {
    /// Seconds since the Unix epoch.
    S,
    /// Milliseconds since the Unix epoch.
    #[default]
    Ms,
    /// Microseconds since the Unix epoch (Debezium's `MicroTimestamp`).
    Us,
}

/// A `[[sources.topic]]` entry that cannot be used; the message names the key.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

impl TopicSource {
    /// Check names, the kind and every pointer; the message says which key is wrong.
    pub fn check(&self) -> Result<(), ConfigError> {
        let here = format!("[[sources.topic]] {:?}", self.name);
        if self.name.is_empty() || self.topic.is_empty() {
            return Err(ConfigError(format!(
                "{here}: name and topic must not be empty"
            )));
        }
        if !epigraph_schemas::topics::valid_tenant(&self.tenant) {
            return Err(ConfigError(format!(
                "{here}: tenant {:?} must be 1-64 characters of letters, digits, '_', '-', '.'",
                self.tenant
            )));
        }
        if epigraph_schemas::SourceKind::parse(&self.kind).is_none() {
            return Err(ConfigError(format!(
                "{here}: kind {:?} is not one of chat, email, calendar, document",
                self.kind
            )));
        }
        let mut pointers: Vec<(&str, &str)> = vec![("body", &self.body)];
        if self.source_id != "key" {
            pointers.push(("source_id", &self.source_id));
        }
        for (name, value) in [
            ("title", &self.title),
            ("author", &self.author),
            ("occurred_at", &self.occurred_at),
            ("thread_id", &self.thread_id),
        ] {
            if let Some(value) = value {
                pointers.push((name, value));
            }
        }
        for (name, value) in &self.extras {
            pointers.push((name, value));
        }
        for (name, pointer) in pointers {
            if !pointer.is_empty() && !pointer.starts_with('/') {
                return Err(ConfigError(format!(
                    "{here}: {name} = {pointer:?} is not a JSON pointer (like \"/text\" or \"/after/text\")"
                )));
            }
        }
        Ok(())
    }
}
