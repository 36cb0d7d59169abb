//! From one record of a foreign topic to a source event: decode, remove the envelope, read the
//! mapped fields. Pure, except [`decode_avro`] which may ask the registry for a writer schema.

use apache_avro::Schema;
use epigraph_schemas::{Party, SourceEvent, SourceKind};
use serde_json::Value;

use super::config::{Envelope, TimeUnit, TopicSource};

/// Why a record cannot become an event: the reason its dead letter carries.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadRecord(pub String);

impl From<String> for BadRecord {
    fn from(reason: String) -> Self {
        BadRecord(reason)
    }
}

impl From<&str> for BadRecord {
    fn from(reason: &str) -> Self {
        BadRecord(reason.to_string())
    }
}

/// Parse a JSON value and remove Kafka Connect's `{"schema": …, "payload": …}` wrapper
/// (`JsonConverter` with `schemas.enable=true`). A JSON string that holds a JSON object (a
/// connector that emits lines of JSON as strings, like FileStreamSource, behind a
/// `JsonConverter`) is read as that object.
///
/// ```
/// use epigraph_sources::topic::decode_json;
/// let wrapped = br#"{"schema": {"type": "string"}, "payload": {"id": 1}}"#;
/// assert_eq!(decode_json(wrapped).unwrap()["id"], 1);
/// let line = br#"{"schema": {"type": "string"}, "payload": "{\"id\": 3}"}"#;
/// assert_eq!(decode_json(line).unwrap()["id"], 3);
/// assert_eq!(decode_json(br#"{"id": 2}"#).unwrap()["id"], 2);
/// assert!(decode_json(b"\xff").unwrap_err().to_string().contains("not JSON"));
/// ```
pub fn decode_json(bytes: &[u8]) -> Result<Value, BadRecord> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("the value is not JSON: {e}"))?;
    object_in_string(unwrap_connect(value))
}

/// A string that holds a JSON object, read as that object (a line-oriented connector such as
/// FileStreamSource writes its lines as strings, whatever the converter); other values as they
/// are.
fn object_in_string(value: Value) -> Result<Value, BadRecord> {
    Ok(match value {
        Value::String(text) if text.trim_start().starts_with('{') => serde_json::from_str(&text)
            .map_err(|e| format!("the value is a string of broken JSON: {e}"))?,
        other => other,
    })
}

fn unwrap_connect(value: Value) -> Value {
    match value {
        Value::Object(mut map)
            if map.len() == 2 && map.contains_key("schema") && map.contains_key("payload") =>
        {
            map.remove("payload").unwrap_or(Value::Null)
        }
        other => other,
    }
}

/// Decode a datum in the Confluent wire format (magic byte 0, big-endian schema id, Avro datum)
/// with its writer schema, into JSON. `schema_of` resolves an id (the registry, cached).
pub async fn decode_avro<F, Fut>(bytes: &[u8], schema_of: F) -> Result<Value, BadRecord>
where
    F: FnOnce(u32) -> Fut,
    Fut: std::future::Future<Output = Result<std::sync::Arc<Schema>, BadRecord>>,
{
    let (id, datum) = wire_frame(bytes)?;
    let schema = schema_of(id).await?;
    avro_to_json(&schema, datum)
}

/// Split a wire-format payload into its schema id and datum.
///
/// ```
/// use epigraph_sources::topic::wire_frame;
/// assert_eq!(wire_frame(&[0, 0, 0, 0, 7, 42]).unwrap(), (7, &[42u8][..]));
/// assert!(wire_frame(b"{}").unwrap_err().to_string().contains("magic byte"));
/// ```
pub fn wire_frame(bytes: &[u8]) -> Result<(u32, &[u8]), BadRecord> {
    match bytes {
        [0, a, b, c, d, datum @ ..] => Ok((u32::from_be_bytes([*a, *b, *c, *d]), datum)),
        _ => Err(
            "not the registry wire format (magic byte 0 and a 4-byte schema id expected)".into(),
        ),
    }
}

/// An Avro datum read with its writer schema, as JSON. A string datum that holds a JSON object
/// (FileStreamSource's lines behind an `AvroConverter`: the writer schema is `"string"`) is read
/// as that object, as in [`decode_json`].
///
/// ```
/// use apache_avro::Schema;
/// use epigraph_sources::topic::avro_to_json;
/// let string = Schema::parse_str(r#""string""#).unwrap();
/// let line = apache_avro::to_avro_datum(&string, r#"{"id": 3}"#).unwrap();
/// assert_eq!(avro_to_json(&string, &line).unwrap()["id"], 3);
/// let text = apache_avro::to_avro_datum(&string, "plain words").unwrap();
/// assert_eq!(avro_to_json(&string, &text).unwrap(), "plain words");
/// ```
pub fn avro_to_json(schema: &Schema, mut datum: &[u8]) -> Result<Value, BadRecord> {
    // Lengths and counts beyond the payload are refused before the decoder reserves room.
    epigraph_schemas::bounded::check_bounded(schema, datum)
        .map_err(|e| format!("the datum does not fit its writer schema: {e}"))?;
    let value = apache_avro::from_avro_datum(schema, &mut datum, None)
        .map_err(|e| format!("the datum does not fit its writer schema: {e}"))?;
    let value = Value::try_from(value)
        .map_err(|e| BadRecord(format!("the datum has no JSON form: {e}")))?;
    object_in_string(value)
}

/// One record, decoded: what the mapping reads.
#[derive(Clone, Debug, Default)]
pub struct Record<'a> {
    /// The Kafka key's bytes.
    pub key: Option<&'a [u8]>,
    /// The decoded value; `None` for a Kafka tombstone (null value).
    pub value: Option<Value>,
    /// The record's Kafka timestamp (ms).
    pub timestamp: Option<i64>,
}

/// The source event a record stands for, or `None` for records that carry no item (Debezium's
/// `t` truncate and `m` message events); the error says what is missing, for the dead letter.
///
/// ```
/// use epigraph_schemas::Op;
/// use epigraph_sources::topic::{Record, TopicSource, map_record};
/// let source: TopicSource = serde_json::from_value(serde_json::json!({
///     "name": "notes", "topic": "crm.notes", "tenant": "acme", "kind": "document",
///     "envelope": "debezium", "source_id": "/id", "source_id_prefix": "crm/", "body": "/text",
///     "title": "/subject"
/// })).unwrap();
/// let change = serde_json::json!({"op": "u", "before": null,
///     "after": {"id": 7, "subject": "Pricing", "text": "We raise the price to €40."}});
/// let event = map_record(&source, &Record { value: Some(change), ..Record::default() }, 0)
///     .unwrap().unwrap();
/// assert_eq!((event.source_id.as_str(), event.op), ("crm/7", Op::Upsert));
/// let delete = serde_json::json!({"op": "d", "before": {"id": 7}, "after": null});
/// let event = map_record(&source, &Record { value: Some(delete), ..Record::default() }, 0)
///     .unwrap().unwrap();
/// assert_eq!((event.source_id.as_str(), event.op), ("crm/7", Op::Delete));
/// ```
pub fn map_record(
    source: &TopicSource,
    record: &Record<'_>,
    now: i64,
) -> Result<Option<SourceEvent>, BadRecord> {
    let kind = SourceKind::parse(&source.kind)
        .ok_or_else(|| format!("kind {:?} is not a source kind", source.kind))?;
    let key = record.key.map(decode_key);
    let tombstone = |row: Option<&Value>| -> Result<Option<SourceEvent>, BadRecord> {
        let id = source_id(source, row, key.as_ref())?;
        Ok(Some(SourceEvent::tombstone(&source.tenant, kind, &id, now)))
    };
    let Some(value) = &record.value else {
        return tombstone(None);
    };
    let row = match source.envelope {
        Envelope::None => value,
        Envelope::Debezium => {
            let op = value.get("op").and_then(Value::as_str).ok_or(
                "a Debezium change event without \"op\" (is envelope = \"debezium\" right?)",
            )?;
            match op {
                "c" | "r" | "u" => value
                    .get("after")
                    .filter(|a| a.is_object())
                    .ok_or_else(|| format!("a Debezium {op:?} event without an \"after\" row"))?,
                "d" => return tombstone(value.get("before").filter(|b| b.is_object())),
                "t" | "m" => return Ok(None),
                other => return Err(BadRecord(format!("unknown Debezium op {other:?}"))),
            }
        }
    };
    if !row.is_object() {
        return Err(BadRecord(format!(
            "the row is {}, not a JSON object",
            kind_of_json(row)
        )));
    }
    let id = source_id(source, Some(row), key.as_ref())?;
    let body =
        text_at(row, &source.body).ok_or_else(|| format!("no text at body = {:?}", source.body))?;
    if body.trim().is_empty() {
        return Err(BadRecord(format!(
            "the text at body = {:?} is empty",
            source.body
        )));
    }
    let title = source.title.as_deref().and_then(|p| text_at(row, p));
    let mut event = SourceEvent::upsert(&source.tenant, kind, &id, title, body, now);
    event.occurred_at =
        match source.occurred_at.as_deref() {
            Some(pointer) => match row.pointer(pointer) {
                None | Some(Value::Null) => record.timestamp,
                Some(value) => Some(millis(value, source.time_unit).ok_or_else(|| {
                    format!("occurred_at = {pointer:?} holds {value}, not a time")
                })?),
            },
            None => record.timestamp,
        };
    if let Some(author) = source.author.as_deref().and_then(|p| row.pointer(p)) {
        event.authors.extend(party(author));
    }
    event.thread_id = source.thread_id.as_deref().and_then(|p| text_at(row, p));
    for (name, pointer) in &source.extras {
        if let Some(value) = row.pointer(pointer).filter(|v| !v.is_null()) {
            let text = value
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| value.to_string());
            event.extras.insert(name.clone(), text);
        }
    }
    event
        .extras
        .insert("origin_topic".into(), source.topic.clone());
    // The version covers time, author, thread and extras too: a metadata change is a change.
    event.reversion();
    Ok(Some(event))
}

/// The key as JSON when it is JSON (Connect's wrapper removed), else as text.
fn decode_key(bytes: &[u8]) -> Value {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(value) => unwrap_connect(value),
        Err(_) => Value::String(String::from_utf8_lossy(bytes).into_owned()),
    }
}

fn source_id(
    source: &TopicSource,
    row: Option<&Value>,
    key: Option<&Value>,
) -> Result<String, BadRecord> {
    let scalar = |value: &Value| match value {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let id = if source.source_id == "key" {
        key.and_then(scalar)
            .ok_or("source_id = \"key\" but the record has no usable key")?
    } else {
        row.and_then(|r| r.pointer(&source.source_id))
            .or_else(|| key.and_then(|k| k.pointer(&source.source_id)))
            .and_then(scalar)
            .ok_or_else(|| format!("no id at source_id = {:?}", source.source_id))?
    };
    let id = format!("{}{id}", source.source_id_prefix);
    if id.len() > 512 {
        return Err(BadRecord(format!(
            "the source id has {} bytes, more than 512",
            id.len()
        )));
    }
    Ok(id)
}

fn text_at(row: &Value, pointer: &str) -> Option<String> {
    match row.pointer(pointer)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn party(value: &Value) -> Option<Party> {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    match value {
        Value::String(s) if s.contains('@') => Some(Party {
            name: None,
            address: Some(s.clone()),
        }),
        Value::String(s) if !s.is_empty() => Some(Party {
            name: Some(s.clone()),
            address: None,
        }),
        Value::Object(map) => {
            let name = text(map.get("name"));
            let address = text(map.get("address").or_else(|| map.get("email")));
            (name.is_some() || address.is_some()).then_some(Party { name, address })
        }
        _ => None,
    }
}

/// A time as ms since the Unix epoch: a number in `unit`, or an RFC 3339 string.
fn millis(value: &Value, unit: TimeUnit) -> Option<i64> {
    match value {
        Value::Number(n) => {
            let n = n.as_i64().or_else(|| n.as_f64().map(|f| f as i64))?;
            Some(match unit {
                TimeUnit::S => n.checked_mul(1000)?,
                TimeUnit::Ms => n,
                TimeUnit::Us => n / 1000,
            })
        }
        Value::String(s) => chrono::DateTime::parse_from_rfc3339(s)
            .ok()
            .map(|t| t.timestamp_millis()),
        _ => None,
    }
}

fn kind_of_json(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
