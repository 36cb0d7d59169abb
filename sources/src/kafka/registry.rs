//! A Confluent-compatible schema registry: a small typed client of its REST API
//! ([`SchemaRegistry`]), the contracts epigraph registers there and the registry wire format of
//! events ([`RegistryCodec`]), and the consumer's decoder of both encodings ([`EventDecoder`]).
//!
//! Subjects (TopicNameStrategy for the values, the record's full name for what they reference):
//! - `<topic>-value`, e.g. `epigraph.events.chat-value`: the `SourceEvent` envelope
//!   (`schemas/avsc/source_event.avsc`) with one Confluent schema reference per record it names;
//! - `org.epigraph.events.v1.ChatMessage`, `…EmailMessage`, `…CalendarEvent`, `…DocumentFile`:
//!   the per-kind records, each in its own subject.
//!
//! Every subject is set to compatibility `BACKWARD` before epigraph registers into it, so a
//! contract change that would leave consumers unable to read older data is refused by the
//! registry (HTTP 409, [`RegistryError::Incompatible`]).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use apache_avro::Schema;
use epigraph_schemas::codec::{
    Framing, RECORD_AVSC, SOURCE_EVENT_AVSC, SOURCE_EVENT_SCHEMA, decode_registry_framed, framing,
    parse_with_references,
};
use epigraph_schemas::{CodecError, SourceEvent, decode_event};
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

use super::{KafkaConfig, SchemaRegistryConfig};

/// The media type of the Confluent API.
const CONTENT_TYPE: &str = "application/vnd.schemaregistry.v1+json";
/// How deep references of references are followed.
const MAX_REFERENCE_DEPTH: usize = 8;
/// The compatibility level epigraph sets on its subjects.
pub const COMPATIBILITY: &str = "BACKWARD";

/// The subject of a topic's values (TopicNameStrategy): `<topic>-value`.
///
/// ```
/// assert_eq!(epigraph_sources::kafka::value_subject("epigraph.events.chat"), "epigraph.events.chat-value");
/// ```
pub fn value_subject(topic: &str) -> String {
    format!("{topic}-value")
}

/// The subject of a per-kind record the envelope references: its full name.
pub fn record_subject(full_name: &str) -> String {
    full_name.to_string()
}

/// A Confluent schema reference: the envelope names `name`, defined by `subject` at `version`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaReference {
    /// The full name used in the referencing schema.
    pub name: String,
    /// The subject holding the referenced schema.
    pub subject: String,
    /// Its version in that subject.
    pub version: i32,
}

/// A schema as the registry returns it (by id or by subject and version).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct RegisteredSchema {
    /// The schema text.
    pub schema: String,
    /// The schemas it references.
    #[serde(default)]
    pub references: Vec<SchemaReference>,
    /// `AVRO` (absent), `JSON` or `PROTOBUF`.
    #[serde(default, rename = "schemaType")]
    pub schema_type: Option<String>,
}

/// Why the registry could not be used. [`RegistryError::Unreachable`] and 5xx answers are the
/// registry's (retry later); the others are answers about the request.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// No answer: connection refused, timeout, DNS.
    #[error("the schema registry at {url} is unreachable ({context}): {source}")]
    Unreachable {
        /// The registry's base URL.
        url: String,
        /// What was being done.
        context: String,
        /// The HTTP client's error.
        #[source]
        source: reqwest::Error,
    },
    /// An error answer other than the ones below.
    #[error("the schema registry at {url} refused {context}: HTTP {status}: {message}")]
    Refused {
        /// The registry's base URL.
        url: String,
        /// What was being done.
        context: String,
        /// The HTTP status.
        status: u16,
        /// The registry's `error_code`, if it gave one.
        error_code: Option<i64>,
        /// The registry's message (or the body).
        message: String,
    },
    /// HTTP 409 on registering: the contract breaks the subject's compatibility level.
    #[error(
        "the schema registry at {url} refused a new version of {subject}: not compatible with the registered versions under its compatibility level (HTTP 409): {message}"
    )]
    Incompatible {
        /// The registry's base URL.
        url: String,
        /// The subject.
        subject: String,
        /// The registry's message.
        message: String,
    },
    /// HTTP 404 on `/schemas/ids/{id}`.
    #[error("schema id {id} is not known to the schema registry at {url}")]
    UnknownSchemaId {
        /// The registry's base URL.
        url: String,
        /// The id.
        id: u32,
    },
    /// The schema of an id is not an Avro schema this build can read.
    #[error("schema id {id} of the schema registry at {url} cannot be read: {reason}")]
    InvalidSchema {
        /// The registry's base URL.
        url: String,
        /// The id.
        id: u32,
        /// Why.
        reason: String,
    },
    /// The configured URL is unusable.
    #[error("invalid [kafka.schema_registry] url {url:?}: {reason}")]
    InvalidUrl {
        /// The URL as configured.
        url: String,
        /// Why.
        reason: String,
    },
}

impl RegistryError {
    /// Whether the registry itself failed (down, overloaded): retrying later may succeed.
    pub fn is_unavailable(&self) -> bool {
        match self {
            RegistryError::Unreachable { .. } => true,
            RegistryError::Refused { status, .. } => *status >= 500,
            _ => false,
        }
    }

    /// Whether the request was refused as a matter of content (incompatible contract, bad URL),
    /// not because the registry failed.
    pub fn is_user_error(&self) -> bool {
        matches!(
            self,
            RegistryError::Incompatible { .. } | RegistryError::InvalidUrl { .. }
        )
    }
}

/// A typed client of the Confluent-compatible REST API (the calls epigraph needs).
#[derive(Clone, Debug)]
pub struct SchemaRegistry {
    http: reqwest::Client,
    base: String,
}

impl SchemaRegistry {
    /// A client of the registry at `config.url` (nothing is sent yet).
    pub fn new(config: &SchemaRegistryConfig) -> Result<Self, RegistryError> {
        let base = config.url.trim().trim_end_matches('/').to_string();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(RegistryError::InvalidUrl {
                url: config.url.clone(),
                reason: "not an http:// or https:// URL".into(),
            });
        }
        let http = reqwest::Client::builder()
            .timeout(Duration::from_millis(config.timeout_ms.max(1)))
            .build()
            .map_err(|e| RegistryError::InvalidUrl {
                url: config.url.clone(),
                reason: e.to_string(),
            })?;
        Ok(SchemaRegistry { http, base })
    }

    /// The base URL.
    pub fn url(&self) -> &str {
        &self.base
    }

    async fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
        context: &str,
    ) -> Result<serde_json::Value, RegistryError> {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header(reqwest::header::ACCEPT, CONTENT_TYPE);
        if let Some(body) = body {
            request = request
                .header(reqwest::header::CONTENT_TYPE, CONTENT_TYPE)
                .body(body.to_string());
        }
        let unreachable = |source| RegistryError::Unreachable {
            url: self.base.clone(),
            context: context.to_string(),
            source,
        };
        let response = request.send().await.map_err(unreachable)?;
        let status = response.status();
        let text = response.text().await.map_err(unreachable)?;
        let json: Option<serde_json::Value> = serde_json::from_str(&text).ok();
        if status.is_success() {
            return json.ok_or_else(|| RegistryError::Refused {
                url: self.base.clone(),
                context: context.to_string(),
                status: status.as_u16(),
                error_code: None,
                message: format!("the answer is not JSON: {}", truncate(&text)),
            });
        }
        let field = |name: &str| json.as_ref().and_then(|j| j.get(name).cloned());
        Err(RegistryError::Refused {
            url: self.base.clone(),
            context: context.to_string(),
            status: status.as_u16(),
            error_code: field("error_code").and_then(|c| c.as_i64()),
            message: field("message")
                .and_then(|m| m.as_str().map(String::from))
                .unwrap_or_else(|| truncate(&text)),
        })
    }

    /// Set a subject's compatibility level (`PUT /config/{subject}`).
    pub async fn set_compatibility(&self, subject: &str, level: &str) -> Result<(), RegistryError> {
        self.request(
            reqwest::Method::PUT,
            &format!("/config/{subject}"),
            Some(serde_json::json!({ "compatibility": level })),
            &format!("setting the compatibility of {subject}"),
        )
        .await?;
        Ok(())
    }

    /// A subject's compatibility level (`GET /config/{subject}`).
    pub async fn compatibility(&self, subject: &str) -> Result<String, RegistryError> {
        let answer = self
            .request(
                reqwest::Method::GET,
                &format!("/config/{subject}"),
                None,
                &format!("reading the compatibility of {subject}"),
            )
            .await?;
        Ok(answer
            .get("compatibilityLevel")
            .or_else(|| answer.get("compatibility"))
            .and_then(|l| l.as_str())
            .unwrap_or_default()
            .to_string())
    }

    fn schema_body(schema: &str, references: &[SchemaReference]) -> serde_json::Value {
        let mut body = serde_json::json!({ "schema": schema });
        if !references.is_empty() {
            body["references"] = serde_json::json!(references);
        }
        body
    }

    /// Register a schema under a subject (`POST /subjects/{subject}/versions`): its id, the
    /// same id again when the subject already has it. A schema the subject's compatibility
    /// level refuses is [`RegistryError::Incompatible`].
    pub async fn register(
        &self,
        subject: &str,
        schema: &str,
        references: &[SchemaReference],
    ) -> Result<u32, RegistryError> {
        let answer = self
            .request(
                reqwest::Method::POST,
                &format!("/subjects/{subject}/versions"),
                Some(Self::schema_body(schema, references)),
                &format!("registering a schema under {subject}"),
            )
            .await
            .map_err(|e| match e {
                RegistryError::Refused {
                    url,
                    status: 409,
                    message,
                    ..
                } => RegistryError::Incompatible {
                    url,
                    subject: subject.to_string(),
                    message,
                },
                other => other,
            })?;
        self.id_of(&answer, subject)
    }

    /// The id and version of a schema already registered under a subject (`POST /subjects/{subject}`).
    pub async fn lookup(
        &self,
        subject: &str,
        schema: &str,
        references: &[SchemaReference],
    ) -> Result<(u32, i32), RegistryError> {
        let answer = self
            .request(
                reqwest::Method::POST,
                &format!("/subjects/{subject}"),
                Some(Self::schema_body(schema, references)),
                &format!("looking a schema up under {subject}"),
            )
            .await?;
        let version = answer
            .get("version")
            .and_then(|v| v.as_i64())
            .and_then(|v| i32::try_from(v).ok())
            .ok_or_else(|| self.malformed(subject, &answer))?;
        Ok((self.id_of(&answer, subject)?, version))
    }

    /// The schema of an id (`GET /schemas/ids/{id}`).
    pub async fn schema(&self, id: u32) -> Result<RegisteredSchema, RegistryError> {
        let answer = self
            .request(
                reqwest::Method::GET,
                &format!("/schemas/ids/{id}"),
                None,
                &format!("reading schema id {id}"),
            )
            .await
            .map_err(|e| match e {
                RegistryError::Refused {
                    url, status: 404, ..
                } => RegistryError::UnknownSchemaId { url, id },
                other => other,
            })?;
        serde_json::from_value(answer.clone()).map_err(|_| self.malformed("a schema", &answer))
    }

    /// One version of a subject (`GET /subjects/{subject}/versions/{version}`).
    pub async fn subject_version(
        &self,
        subject: &str,
        version: i32,
    ) -> Result<RegisteredSchema, RegistryError> {
        let answer = self
            .request(
                reqwest::Method::GET,
                &format!("/subjects/{subject}/versions/{version}"),
                None,
                &format!("reading version {version} of {subject}"),
            )
            .await?;
        serde_json::from_value(answer.clone()).map_err(|_| self.malformed(subject, &answer))
    }

    /// The Avro schema of an id with its references resolved (each reference's text fetched
    /// from its subject and version, recursively, and defined inline at its first use).
    pub async fn writer_schema(&self, id: u32) -> Result<Schema, RegistryError> {
        let invalid = |reason: String| RegistryError::InvalidSchema {
            url: self.base.clone(),
            id,
            reason,
        };
        let root = self.schema(id).await?;
        if let Some(kind) = root.schema_type.as_deref().filter(|k| *k != "AVRO") {
            return Err(invalid(format!("a {kind} schema, not Avro")));
        }
        let mut named: Vec<(String, String)> = Vec::new();
        let mut pending: Vec<(SchemaReference, usize)> =
            root.references.iter().cloned().map(|r| (r, 1)).collect();
        while let Some((reference, depth)) = pending.pop() {
            if named.iter().any(|(name, _)| *name == reference.name) {
                continue;
            }
            if depth > MAX_REFERENCE_DEPTH {
                return Err(invalid(format!(
                    "references nested deeper than {MAX_REFERENCE_DEPTH}"
                )));
            }
            let referenced = self
                .subject_version(&reference.subject, reference.version)
                .await?;
            pending.extend(referenced.references.into_iter().map(|r| (r, depth + 1)));
            named.push((reference.name, referenced.schema));
        }
        parse_with_references(&root.schema, &named).map_err(|e| invalid(e.to_string()))
    }

    fn id_of(&self, answer: &serde_json::Value, what: &str) -> Result<u32, RegistryError> {
        answer
            .get("id")
            .and_then(|v| v.as_u64())
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| self.malformed(what, answer))
    }

    fn malformed(&self, what: &str, answer: &serde_json::Value) -> RegistryError {
        RegistryError::Refused {
            url: self.base.clone(),
            context: format!("answering about {what}"),
            status: 200,
            error_code: None,
            message: format!("unexpected answer {}", truncate(&answer.to_string())),
        }
    }
}

fn truncate(text: &str) -> String {
    let mut end = text.len().min(300);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

/// The registry wire format of events: registers epigraph's contracts (once per topic and
/// process) and caches the writer schema of every id it has read.
#[derive(Debug)]
pub struct RegistryCodec {
    registry: SchemaRegistry,
    /// The envelope's id per topic, once registered.
    ids: Mutex<HashMap<String, u32>>,
    /// The references to the per-kind records, once registered.
    records: Mutex<Option<Vec<SchemaReference>>>,
    /// Writer schemas by id.
    writers: Mutex<HashMap<u32, Arc<Schema>>>,
}

impl RegistryCodec {
    /// The codec of the configured registry; `None` when `[kafka.schema_registry] url` is empty.
    pub fn from_config(config: &KafkaConfig) -> Result<Option<Arc<Self>>, RegistryError> {
        if !config.schema_registry.enabled() {
            return Ok(None);
        }
        Ok(Some(Arc::new(RegistryCodec {
            registry: SchemaRegistry::new(&config.schema_registry)?,
            ids: Mutex::new(HashMap::new()),
            records: Mutex::new(None),
            writers: Mutex::new(HashMap::new()),
        })))
    }

    /// The client.
    pub fn registry(&self) -> &SchemaRegistry {
        &self.registry
    }

    /// Register the contracts for a topic (the per-kind records, then the envelope under
    /// `<topic>-value` referencing them, every subject set to `BACKWARD` first) and return the
    /// envelope's id. Cached: the registry is asked once per topic and process.
    pub async fn register_contracts(&self, topic: &str) -> Result<u32, RegistryError> {
        let mut ids = self.ids.lock().await;
        if let Some(id) = ids.get(topic) {
            return Ok(*id);
        }
        let references = self.record_references().await?;
        let subject = value_subject(topic);
        self.registry
            .set_compatibility(&subject, COMPATIBILITY)
            .await?;
        let id = self
            .registry
            .register(&subject, SOURCE_EVENT_AVSC, &references)
            .await?;
        tracing::info!(%subject, id, registry = %self.registry.url(), "registered the event contracts");
        ids.insert(topic.to_string(), id);
        self.writers
            .lock()
            .await
            .insert(id, Arc::new(SOURCE_EVENT_SCHEMA.clone()));
        Ok(id)
    }

    async fn record_references(&self) -> Result<Vec<SchemaReference>, RegistryError> {
        let mut records = self.records.lock().await;
        if let Some(references) = records.as_ref() {
            return Ok(references.clone());
        }
        let mut references = Vec::with_capacity(RECORD_AVSC.len());
        for (full_name, _, text) in RECORD_AVSC {
            let subject = record_subject(full_name);
            self.registry
                .set_compatibility(&subject, COMPATIBILITY)
                .await?;
            self.registry.register(&subject, text, &[]).await?;
            let (_, version) = self.registry.lookup(&subject, text, &[]).await?;
            references.push(SchemaReference {
                name: full_name.to_string(),
                subject,
                version,
            });
        }
        *records = Some(references.clone());
        Ok(references)
    }

    /// The writer schema of an id, from the cache or the registry.
    pub async fn writer(&self, id: u32) -> Result<Arc<Schema>, RegistryError> {
        if let Some(schema) = self.writers.lock().await.get(&id) {
            return Ok(schema.clone());
        }
        let schema = Arc::new(self.registry.writer_schema(id).await?);
        self.writers.lock().await.insert(id, schema.clone());
        Ok(schema)
    }
}

/// Why a payload on an event topic could not be decoded. Everything but
/// [`EventDecodeError::Unavailable`] is the message's fault (it goes to the dead-letter topic);
/// an unavailable registry is not, and stops the caller instead.
#[derive(Debug, thiserror::Error)]
pub enum EventDecodeError {
    /// Not a payload of either encoding, or a datum that does not fit its writer schema.
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// A registry-framed payload, and no registry to ask for its schema.
    #[error(
        "registry-framed payload (schema id {schema_id}) but no schema registry is configured ([kafka.schema_registry] url)"
    )]
    NoRegistry {
        /// The id in the payload.
        schema_id: u32,
    },
    /// The registry does not know the id, or its schema is not one this build reads.
    #[error(transparent)]
    Rejected(RegistryError),
    /// The registry did not answer (or failed): not the message's fault.
    #[error(transparent)]
    Unavailable(RegistryError),
}

impl EventDecodeError {
    /// Whether the message is at fault (dead-letter it) rather than the registry.
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, EventDecodeError::Unavailable(_))
    }
}

/// Decodes event payloads of both encodings, dispatching on the first byte: `C3` single-object
/// encoding (fingerprints of the bundled schemas), `0` the registry wire format (the schema of
/// the id from the registry, cached).
#[derive(Clone, Debug, Default)]
pub struct EventDecoder {
    registry: Option<Arc<RegistryCodec>>,
}

impl EventDecoder {
    /// A decoder for the configured registry (or none: single-object encoding only).
    pub fn new(config: &KafkaConfig) -> Result<Self, RegistryError> {
        Ok(Self::with_codec(RegistryCodec::from_config(config)?))
    }

    /// A decoder sharing a codec (and its cache) with a producer.
    pub fn with_codec(registry: Option<Arc<RegistryCodec>>) -> Self {
        EventDecoder { registry }
    }

    /// Decode one payload.
    pub async fn decode(&self, payload: &[u8]) -> Result<SourceEvent, EventDecodeError> {
        match framing(payload)? {
            Framing::SingleObject => Ok(decode_event(payload)?),
            Framing::Registry { schema_id } => {
                let Some(codec) = &self.registry else {
                    return Err(EventDecodeError::NoRegistry { schema_id });
                };
                let writer = codec.writer(schema_id).await.map_err(|e| match e {
                    RegistryError::UnknownSchemaId { .. } | RegistryError::InvalidSchema { .. } => {
                        EventDecodeError::Rejected(e)
                    }
                    other => EventDecodeError::Unavailable(other),
                })?;
                Ok(decode_registry_framed(&writer, payload)?)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_registry_that_is_down_is_a_typed_unavailable_error() {
        // A port nothing listens on (bound, then released).
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = KafkaConfig {
            schema_registry: SchemaRegistryConfig {
                url: format!("http://127.0.0.1:{port}/apis/ccompat/v7"),
                timeout_ms: 2_000,
            },
            ..KafkaConfig::default()
        };
        let codec = RegistryCodec::from_config(&config).unwrap().unwrap();
        let error = codec.register_contracts("t.events.chat").await.unwrap_err();
        assert!(error.is_unavailable(), "{error}");
        assert!(error.to_string().contains("is unreachable"), "{error}");
        let decoder = EventDecoder::with_codec(Some(codec));
        let error = decoder.decode(&[0, 0, 0, 0, 9, 2]).await.unwrap_err();
        assert!(!error.is_bad_input(), "{error}");
    }

    #[tokio::test]
    async fn without_a_registry_single_object_decodes_and_registry_framing_is_refused() {
        let decoder = EventDecoder::default();
        let event = SourceEvent::upsert(
            "acme",
            epigraph_schemas::SourceKind::Document,
            "a.md",
            None,
            "text".into(),
            1,
        );
        let single = epigraph_schemas::encode_event(&event).unwrap();
        assert_eq!(decoder.decode(&single).await.unwrap(), event);
        let framed = epigraph_schemas::codec::encode_registry_framed(5, &event).unwrap();
        let error = decoder.decode(&framed).await.unwrap_err();
        assert!(
            matches!(error, EventDecodeError::NoRegistry { schema_id: 5 }),
            "{error}"
        );
        assert!(error.is_bad_input());
        assert!(
            SchemaRegistry::new(&SchemaRegistryConfig {
                url: "registry:8081".into(),
                timeout_ms: 1
            })
            .is_err()
        );
    }
}
