//! Avro encodings of [`SourceEvent`]s: single-object encoding (the default, no registry) and
//! the schema registry's wire format.
//!
//! A single-object payload starts with the spec's marker `C3 01` and the 8-byte little-endian
//! CRC-64-AVRO (Rabin) fingerprint of the writer schema's canonical form, so a consumer knows
//! which schema wrote it; the datum is then resolved against the current reader schema.
//!
//! A registry-framed payload (Confluent's wire format) starts with the magic byte `0` and the
//! writer schema's 4-byte big-endian id at the registry, then the Avro binary datum. Finding the
//! schema of an id is I/O, so it is the caller's (`epigraph_sources::kafka`): this module frames,
//! unframes and decodes against a writer schema it is given.

use std::sync::LazyLock;

use apache_avro::rabin::Rabin;
use apache_avro::{Schema, from_avro_datum, from_value, to_avro_datum, to_value};

use crate::SourceEvent;

/// The envelope of [`SourceEvent`] (`avsc/source_event.avsc`); it names the per-kind records,
/// which live in their own files.
pub const SOURCE_EVENT_AVSC: &str = include_str!("../avsc/source_event.avsc");
/// The per-kind records, `(full name, file name, text)`.
pub const RECORD_AVSC: [(&str, &str, &str); 4] = [
    (
        "org.epigraph.events.v1.ChatMessage",
        "chat_message.avsc",
        include_str!("../avsc/chat_message.avsc"),
    ),
    (
        "org.epigraph.events.v1.EmailMessage",
        "email_message.avsc",
        include_str!("../avsc/email_message.avsc"),
    ),
    (
        "org.epigraph.events.v1.CalendarEvent",
        "calendar_event.avsc",
        include_str!("../avsc/calendar_event.avsc"),
    ),
    (
        "org.epigraph.events.v1.DocumentFile",
        "document_file.avsc",
        include_str!("../avsc/document_file.avsc"),
    ),
];
/// The first published version, frozen (`avsc/source_event.v0.avsc`).
pub const SOURCE_EVENT_V0_AVSC: &str = include_str!("../avsc/source_event.v0.avsc");
/// The second, without per-kind records, frozen (`avsc/source_event.v1.avsc`).
pub const SOURCE_EVENT_V1_AVSC: &str = include_str!("../avsc/source_event.v1.avsc");

/// The envelope with every record it names defined inline at its first use: one self-contained
/// schema (what the fingerprint covers and what registries without references need).
///
/// ```
/// let text = epigraph_schemas::codec::composed_source_event();
/// assert!(text.contains("\"name\":\"Attendee\""));
/// ```
pub fn composed_source_event() -> String {
    fn inline(value: &mut serde_json::Value, defined: &mut Vec<&'static str>) {
        match value {
            serde_json::Value::String(name) => {
                if let Some((full, _, text)) = RECORD_AVSC.iter().find(|(full, ..)| full == name)
                    && !defined.contains(full)
                {
                    defined.push(full);
                    let mut record: serde_json::Value =
                        serde_json::from_str(text).expect("bundled record .avsc is JSON");
                    inline(&mut record, defined);
                    *value = record;
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| inline(v, defined)),
            serde_json::Value::Object(map) => map.values_mut().for_each(|v| inline(v, defined)),
            _ => {}
        }
    }
    let mut envelope: serde_json::Value =
        serde_json::from_str(SOURCE_EVENT_AVSC).expect("source_event.avsc is JSON");
    let mut defined = Vec::new();
    if let Some(fields) = envelope.get_mut("fields") {
        inline(fields, &mut defined);
    }
    envelope.to_string()
}

const MARKER: [u8; 2] = [0xC3, 0x01];
const HEADER_LEN: usize = 10;

/// The parsed current schema.
pub static SOURCE_EVENT_SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
    Schema::parse_str(&composed_source_event())
        .expect("source_event.avsc and its records are valid")
});

/// Every schema version a consumer can read, with its fingerprint; the current one first.
static WRITER_SCHEMAS: LazyLock<Vec<([u8; 8], Schema)>> = LazyLock::new(|| {
    let mut schemas = vec![(
        fingerprint(&SOURCE_EVENT_SCHEMA),
        SOURCE_EVENT_SCHEMA.clone(),
    )];
    for text in [SOURCE_EVENT_V1_AVSC, SOURCE_EVENT_V0_AVSC] {
        let schema = Schema::parse_str(text).expect("bundled .avsc is valid");
        schemas.push((fingerprint(&schema), schema));
    }
    schemas
});

/// Why a payload could not be encoded or decoded. Decoding errors are the producer's fault
/// (bad input): retrying does not help, the payload goes to the dead-letter topic.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    /// The payload is shorter than the single-object header or lacks the `C3 01` marker.
    #[error("not an Avro single-object payload ({0})")]
    NotSingleObject(&'static str),
    /// The fingerprint names a schema this build does not know.
    #[error("unknown writer schema fingerprint {0}")]
    UnknownSchema(String),
    /// The datum does not match its writer schema, or cannot be resolved to the reader schema.
    #[error("invalid Avro datum: {0}")]
    Avro(#[from] apache_avro::Error),
    /// A registry-framed payload shorter than its 5-byte header.
    #[error("registry-framed payload shorter than its 5-byte header (magic byte 0 + schema id)")]
    TruncatedRegistryHeader,
    /// A schema from a registry that does not parse, or whose references cannot be resolved.
    #[error("invalid writer schema: {0}")]
    InvalidWriterSchema(String),
    /// The datum claims more than it holds (see [`crate::bounded`]): refused before decoding.
    #[error("invalid Avro datum: {0}")]
    Unbounded(#[from] crate::bounded::BoundError),
}

/// The 8-byte Rabin fingerprint of a schema's canonical form, as written in the header.
pub fn fingerprint(schema: &Schema) -> [u8; 8] {
    let bytes = schema.fingerprint::<Rabin>().bytes;
    bytes.try_into().expect("Rabin fingerprints are 8 bytes")
}

/// Encode an event with the current schema.
///
/// ```
/// use epigraph_schemas::{SourceEvent, SourceKind, decode_event, encode_event};
/// let event = SourceEvent::upsert("acme", SourceKind::Document, "a.md", None, "text".into(), 1);
/// let bytes = encode_event(&event).unwrap();
/// assert_eq!(&bytes[..2], &[0xC3, 0x01]);
/// assert_eq!(decode_event(&bytes).unwrap(), event);
/// ```
pub fn encode_event(event: &SourceEvent) -> Result<Vec<u8>, CodecError> {
    // The current schema's fingerprint, computed once: hashing the canonical form on every
    // event took two thirds of a connector's publish time.
    let (print, schema) = &WRITER_SCHEMAS[0];
    encode_single_object(print, schema, event)
}

/// Encode any serializable value with the given writer schema (used by tests of old versions).
pub fn encode_with<T: serde::Serialize>(schema: &Schema, value: &T) -> Result<Vec<u8>, CodecError> {
    encode_single_object(&fingerprint(schema), schema, value)
}

fn encode_single_object<T: serde::Serialize>(
    print: &[u8; 8],
    schema: &Schema,
    value: &T,
) -> Result<Vec<u8>, CodecError> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(&MARKER);
    out.extend_from_slice(print);
    // `resolve` maps serde's shapes onto the schema (strings to enum symbols, options to
    // unions, longs to timestamps) and validates the result.
    let value = to_value(value)?.resolve(schema)?;
    out.extend(to_avro_datum(schema, value)?);
    Ok(out)
}

/// Decode a single-object payload written with any known schema version.
///
/// ```
/// use epigraph_schemas::{CodecError, decode_event};
/// assert!(matches!(decode_event(b"{\"json\": 1}"), Err(CodecError::NotSingleObject(_))));
/// ```
pub fn decode_event(payload: &[u8]) -> Result<SourceEvent, CodecError> {
    if payload.len() < HEADER_LEN {
        return Err(CodecError::NotSingleObject(
            "shorter than the 10-byte header",
        ));
    }
    if payload[..2] != MARKER {
        return Err(CodecError::NotSingleObject("missing the C3 01 marker"));
    }
    let print: [u8; 8] = payload[2..HEADER_LEN].try_into().expect("8 bytes");
    let writer = WRITER_SCHEMAS
        .iter()
        .find(|(known, _)| *known == print)
        .map(|(_, schema)| schema)
        .ok_or_else(|| CodecError::UnknownSchema(hex::encode(print)))?;
    let mut datum = &payload[HEADER_LEN..];
    refuse_overlong(writer, datum)?;
    let value = from_avro_datum(writer, &mut datum, Some(&SOURCE_EVENT_SCHEMA))?;
    Ok(from_value::<SourceEvent>(&value)?)
}

/// Refuses a datum whose lengths or counts claim more than it holds, before the decoder
/// reserves room for them (see [`crate::bounded`]); a datum that merely ends early or is
/// otherwise malformed is left to the decoder, which says how.
fn refuse_overlong(writer: &Schema, datum: &[u8]) -> Result<(), CodecError> {
    match crate::bounded::check_bounded(writer, datum) {
        Err(overlong @ crate::bounded::BoundError::Overlong { .. }) => Err(overlong.into()),
        _ => Ok(()),
    }
}

/// The magic byte of the schema registry wire format.
pub const REGISTRY_MAGIC: u8 = 0;
const REGISTRY_HEADER_LEN: usize = 5;

/// How a payload is framed, read from its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// Avro single-object encoding: `C3 01` + 8-byte fingerprint + datum.
    SingleObject,
    /// The schema registry's wire format: `00` + 4-byte big-endian schema id + datum.
    Registry {
        /// The writer schema's id at the registry.
        schema_id: u32,
    },
}

/// Tell the two encodings apart by their first byte (`C3` or `0`).
///
/// ```
/// use epigraph_schemas::codec::{Framing, framing};
/// assert_eq!(framing(&[0, 0, 0, 1, 7, 2]).unwrap(), Framing::Registry { schema_id: 263 });
/// assert_eq!(framing(&[0xC3, 0x01]).unwrap(), Framing::SingleObject);
/// assert!(framing(b"{}").is_err());
/// ```
pub fn framing(payload: &[u8]) -> Result<Framing, CodecError> {
    match payload.first() {
        Some(&REGISTRY_MAGIC) => {
            let id: [u8; 4] = payload
                .get(1..REGISTRY_HEADER_LEN)
                .and_then(|b| b.try_into().ok())
                .ok_or(CodecError::TruncatedRegistryHeader)?;
            Ok(Framing::Registry {
                schema_id: u32::from_be_bytes(id),
            })
        }
        Some(0xC3) => Ok(Framing::SingleObject),
        Some(_) => Err(CodecError::NotSingleObject(
            "neither the C3 01 marker nor the registry's magic byte 0",
        )),
        None => Err(CodecError::NotSingleObject("empty payload")),
    }
}

/// Encode an event in the registry wire format, under the id the registry gave the current
/// envelope (its datum is the same as in single-object encoding).
///
/// ```
/// use epigraph_schemas::codec::{decode_registry_framed, encode_registry_framed, SOURCE_EVENT_SCHEMA};
/// use epigraph_schemas::{SourceEvent, SourceKind};
/// let event = SourceEvent::upsert("acme", SourceKind::Document, "a.md", None, "text".into(), 1);
/// let bytes = encode_registry_framed(42, &event).unwrap();
/// assert_eq!(&bytes[..5], &[0, 0, 0, 0, 42]);
/// assert_eq!(decode_registry_framed(&SOURCE_EVENT_SCHEMA, &bytes).unwrap(), event);
/// ```
pub fn encode_registry_framed(schema_id: u32, event: &SourceEvent) -> Result<Vec<u8>, CodecError> {
    let mut out = Vec::with_capacity(256);
    out.push(REGISTRY_MAGIC);
    out.extend_from_slice(&schema_id.to_be_bytes());
    let value = to_value(event)?.resolve(&SOURCE_EVENT_SCHEMA)?;
    out.extend(to_avro_datum(&SOURCE_EVENT_SCHEMA, value)?);
    Ok(out)
}

/// Decode a registry-framed payload whose writer schema (the schema of its id) is `writer`,
/// resolved against the current reader schema.
pub fn decode_registry_framed(writer: &Schema, payload: &[u8]) -> Result<SourceEvent, CodecError> {
    let Framing::Registry { .. } = framing(payload)? else {
        return Err(CodecError::NotSingleObject("not registry-framed"));
    };
    let mut datum = &payload[REGISTRY_HEADER_LEN..];
    refuse_overlong(writer, datum)?;
    let value = from_avro_datum(writer, &mut datum, Some(&SOURCE_EVENT_SCHEMA))?;
    Ok(from_value::<SourceEvent>(&value)?)
}

/// Parse a schema that names others (a registry's schema references): every named type in
/// `named` (`(full name, schema text)`, e.g. the texts of the references) is defined inline at
/// its first use, recursively, giving one self-contained schema.
///
/// ```
/// use epigraph_schemas::codec::{RECORD_AVSC, SOURCE_EVENT_AVSC, SOURCE_EVENT_SCHEMA, fingerprint, parse_with_references};
/// let named: Vec<(String, String)> =
///     RECORD_AVSC.iter().map(|(full, _, text)| (full.to_string(), text.to_string())).collect();
/// let schema = parse_with_references(SOURCE_EVENT_AVSC, &named).unwrap();
/// assert_eq!(fingerprint(&schema), fingerprint(&SOURCE_EVENT_SCHEMA));
/// ```
pub fn parse_with_references(root: &str, named: &[(String, String)]) -> Result<Schema, CodecError> {
    fn inline(
        value: &mut serde_json::Value,
        named: &[(String, serde_json::Value)],
        defined: &mut Vec<String>,
    ) {
        match value {
            serde_json::Value::String(name) => {
                if let Some((full, definition)) = named.iter().find(|(full, _)| full == name)
                    && !defined.contains(full)
                {
                    defined.push(full.clone());
                    let mut definition = definition.clone();
                    inline(&mut definition, named, defined);
                    *value = definition;
                }
            }
            serde_json::Value::Array(items) => {
                items.iter_mut().for_each(|v| inline(v, named, defined))
            }
            serde_json::Value::Object(map) => {
                map.values_mut().for_each(|v| inline(v, named, defined))
            }
            _ => {}
        }
    }
    let invalid = |e: serde_json::Error| CodecError::InvalidWriterSchema(e.to_string());
    let named: Vec<(String, serde_json::Value)> = named
        .iter()
        .map(|(full, text)| Ok((full.clone(), serde_json::from_str(text).map_err(invalid)?)))
        .collect::<Result<_, CodecError>>()?;
    let mut root: serde_json::Value = serde_json::from_str(root).map_err(invalid)?;
    let mut defined = Vec::new();
    match root.get_mut("fields") {
        Some(fields) => inline(fields, &named, &mut defined),
        None => inline(&mut root, &named, &mut defined),
    }
    Schema::parse(&root).map_err(|e| CodecError::InvalidWriterSchema(e.to_string()))
}

/// The bundled `.avsc` files as `(file name, text)`, for `epigraph schemas export`: each record
/// in its own file (named by its full name), the envelope naming them, and the composed,
/// self-contained envelope.
pub fn schema_files() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = RECORD_AVSC
        .iter()
        .map(|(full, _, text)| (format!("{full}.avsc"), text.to_string()))
        .collect();
    files.push((
        "org.epigraph.events.v1.SourceEvent.avsc".into(),
        SOURCE_EVENT_AVSC.to_string(),
    ));
    let composed: serde_json::Value =
        serde_json::from_str(&composed_source_event()).expect("composed schema is JSON");
    files.push((
        "org.epigraph.events.v1.SourceEvent.composed.avsc".into(),
        serde_json::to_string_pretty(&composed).expect("JSON serializes"),
    ));
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Link, Op, Party, SourceKind};

    fn full_event() -> SourceEvent {
        let mut event = SourceEvent::upsert(
            "acme",
            SourceKind::Email,
            "<id@x>",
            Some("Budget — Q3".into()),
            "We decided: €250K.".into(),
            1_700_000_000_000,
        );
        event.occurred_at = Some(1_699_999_999_000);
        event.authors = vec![Party {
            name: Some("Jas Singh".into()),
            address: Some("jas@acme.io".into()),
        }];
        event.participants = vec![Party {
            name: None,
            address: Some("ops@acme.io".into()),
        }];
        event.thread_id = Some("<root@x>".into());
        event.links = vec![Link {
            rel: "attachment".into(),
            target: "plan.pdf".into(),
            media_type: Some("application/pdf".into()),
            size_bytes: Some(1234),
        }];
        event.extras.insert("mailbox".into(), "inbox".into());
        event
    }

    #[test]
    fn every_field_round_trips() {
        let event = full_event();
        let bytes = encode_event(&event).expect("encodes");
        assert_eq!(decode_event(&bytes).expect("decodes"), event);
        let tomb = SourceEvent::tombstone("acme", SourceKind::Chat, "C1/1.2", 5);
        assert_eq!(
            decode_event(&encode_event(&tomb).unwrap()).unwrap().op,
            Op::Delete
        );
    }

    #[derive(serde::Serialize)]
    struct SourceEventV0<'a> {
        event_id: &'a str,
        tenant: &'a str,
        source_kind: SourceKind,
        source_id: &'a str,
        version: &'a str,
        op: Op,
        occurred_at: Option<i64>,
        ingested_at: i64,
        title: Option<&'a str>,
        body: &'a str,
    }

    #[test]
    fn current_reader_reads_data_written_with_v0() {
        let v0 = Schema::parse_str(SOURCE_EVENT_V0_AVSC).unwrap();
        let old = SourceEventV0 {
            event_id: "e1",
            tenant: "acme",
            source_kind: SourceKind::Document,
            source_id: "a.md",
            version: "v",
            op: Op::Upsert,
            occurred_at: Some(7),
            ingested_at: 8,
            title: Some("A"),
            body: "text",
        };
        let decoded = decode_event(&encode_with(&v0, &old).unwrap()).expect("v0 data resolves");
        assert_eq!(decoded.source_id, "a.md");
        assert_eq!(decoded.occurred_at, Some(7));
        assert!(
            decoded.authors.is_empty() && decoded.extras.is_empty() && decoded.thread_id.is_none()
        );
    }

    #[test]
    fn schema_changes_stay_backward_compatible() {
        use apache_avro::schema_compatibility::SchemaCompatibility;
        for old in [SOURCE_EVENT_V0_AVSC, SOURCE_EVENT_V1_AVSC] {
            let old = Schema::parse_str(old).unwrap();
            SchemaCompatibility::can_read(&old, &SOURCE_EVENT_SCHEMA).expect("current reads it");
        }
    }

    #[test]
    fn exported_files_are_valid_schemas_and_the_composed_one_is_the_writer() {
        let files = schema_files();
        assert_eq!(files.len(), 6);
        for (name, text) in &files {
            assert!(name.ends_with(".avsc"));
            if name.contains("SourceEvent.avsc") {
                continue; // names the records: parsed with them below
            }
            Schema::parse_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let composed = &files.last().unwrap().1;
        let schema = Schema::parse_str(composed).unwrap();
        assert_eq!(fingerprint(&schema), fingerprint(&SOURCE_EVENT_SCHEMA));
        let texts: Vec<&str> = files[..5].iter().map(|(_, t)| t.as_str()).collect();
        assert!(
            Schema::parse_list(texts).is_ok(),
            "the envelope and its records parse together"
        );
    }

    #[test]
    fn every_per_kind_record_round_trips() {
        use crate::records::*;
        let mut chat =
            SourceEvent::upsert("t", SourceKind::Chat, "slack/g/1.0", None, "hi".into(), 1);
        chat.chat = Some(ChatMessage {
            channel: "general".into(),
            channel_kind: Some("public".into()),
            channel_id: Some("C1".into()),
            ts: "1.0".into(),
            user_id: Some("U1".into()),
            subtype: None,
            edited_at: Some(5),
            edited_by: Some("U1".into()),
            mentions: vec!["Ada".into()],
        });
        let mut email = full_event();
        email.email = Some(EmailMessage {
            message_id: Some("id@x".into()),
            in_reply_to: Some("root@x".into()),
            references: vec!["root@x".into(), "mid@x".into()],
            charset: Some("iso-8859-1".into()),
            mailbox: Some("inbox".into()),
            quoted_text: Some("> old".into()),
            signature: None,
        });
        let mut calendar =
            SourceEvent::upsert("t", SourceKind::Calendar, "ics/u", None, "x".into(), 1);
        calendar.calendar = Some(CalendarEvent {
            uid: "u".into(),
            end: Some(9),
            all_day: true,
            location: Some("Berlin".into()),
            status: Some("CONFIRMED".into()),
            sequence: Some(2),
            rrule: Some("FREQ=WEEKLY".into()),
            recurrence_id: Some("20260105T090000Z".into()),
            method: Some("REQUEST".into()),
            attendees: vec![Attendee {
                name: Some("Tom".into()),
                address: "tom@x".into(),
                partstat: Some("ACCEPTED".into()),
                role: None,
                rsvp: Some("TRUE".into()),
            }],
        });
        let mut document =
            SourceEvent::upsert("t", SourceKind::Document, "a.md", None, "x".into(), 1);
        document.document = Some(DocumentFile {
            path: "a.md".into(),
            format: Some("md".into()),
        });
        for event in [chat, email, calendar, document] {
            let bytes = encode_event(&event).expect("encodes");
            assert_eq!(decode_event(&bytes).expect("decodes"), event);
        }
    }

    #[test]
    fn the_current_reader_reads_data_written_before_the_records() {
        let v1 = Schema::parse_str(SOURCE_EVENT_V1_AVSC).unwrap();
        let mut event = full_event();
        let bytes = {
            // Serialize without the record fields, as a v1 writer did.
            let mut value = serde_json::to_value(&event).unwrap();
            for key in ["chat", "email", "calendar", "document"] {
                value.as_object_mut().unwrap().remove(key);
            }
            encode_with(&v1, &value).unwrap()
        };
        let decoded = decode_event(&bytes).expect("v1 data resolves");
        event.email = None;
        assert_eq!(decoded, event);
    }

    #[test]
    fn registry_framing_round_trips_and_refuses_what_it_cannot_read() {
        let event = full_event();
        let bytes = encode_registry_framed(7, &event).unwrap();
        assert_eq!(framing(&bytes).unwrap(), Framing::Registry { schema_id: 7 });
        assert_eq!(
            decode_registry_framed(&SOURCE_EVENT_SCHEMA, &bytes).unwrap(),
            event
        );
        // The same datum as single-object encoding, behind another header.
        assert_eq!(bytes[5..], encode_event(&event).unwrap()[10..]);
        assert!(matches!(
            framing(&[0, 0, 1]),
            Err(CodecError::TruncatedRegistryHeader)
        ));
        assert!(matches!(
            decode_registry_framed(&SOURCE_EVENT_SCHEMA, &bytes[..bytes.len() / 2]),
            Err(CodecError::Avro(_) | CodecError::Unbounded(_))
        ));
        // A writer schema that is not an envelope does not resolve to the reader's.
        let string = Schema::parse_str("\"string\"").unwrap();
        assert!(decode_registry_framed(&string, &bytes).is_err());
        // Data written with an older envelope registered under its own id reads.
        let v1 = Schema::parse_str(SOURCE_EVENT_V1_AVSC).unwrap();
        let mut value = serde_json::to_value(&event).unwrap();
        for key in ["chat", "email", "calendar", "document"] {
            value.as_object_mut().unwrap().remove(key);
        }
        let mut old = vec![0, 0, 0, 0, 3];
        old.extend(&encode_with(&v1, &value).unwrap()[10..]);
        assert_eq!(
            decode_registry_framed(&v1, &old).unwrap().source_id,
            event.source_id
        );
    }

    #[test]
    fn unknown_fingerprint_and_truncated_datum_are_errors() {
        let mut bytes = encode_event(&full_event()).unwrap();
        let truncated = &bytes[..bytes.len() / 2];
        assert!(matches!(
            decode_event(truncated),
            Err(CodecError::Avro(_) | CodecError::Unbounded(_))
        ));
        bytes[3] ^= 0xFF;
        assert!(matches!(
            decode_event(&bytes),
            Err(CodecError::UnknownSchema(_))
        ));
    }

    /// 100,000 mutated and random payloads (`EPIGRAPH_FUZZ_CASES` overrides the count), half
    /// single-object encoded, half registry-framed: decoding never panics, every refusal has a
    /// reason, and what decodes encodes again.
    #[test]
    fn decoding_never_panics_on_100k_mutated_payloads() {
        let single = encode_event(&full_event()).unwrap();
        let framed = encode_registry_framed(7, &full_event()).unwrap();
        let mut state: u64 = 0xa7_50;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize
        };
        let cases: usize = std::env::var("EPIGRAPH_FUZZ_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(100_000);
        let (mut decoded, mut refused) = (0usize, 0usize);
        for case in 0..cases {
            let seed = if case % 2 == 0 { &single } else { &framed };
            let payload: Vec<u8> = if case % 10 == 9 {
                // Random bytes after a valid header.
                let header = if case % 2 == 0 {
                    HEADER_LEN
                } else {
                    REGISTRY_HEADER_LEN
                };
                let mut p = seed[..header].to_vec();
                p.extend((0..next() % 300).map(|_| next() as u8));
                p
            } else {
                let mut p = seed.clone();
                for _ in 0..1 + next() % 4 {
                    let at = next() % p.len();
                    match next() % 4 {
                        0 => p[at] = next() as u8,
                        1 => p[at] ^= 1 << (next() % 8),
                        2 => {
                            p.remove(at);
                        }
                        _ => p.insert(at, next() as u8),
                    }
                }
                p
            };
            let result = match framing(&payload) {
                Ok(Framing::Registry { .. }) => {
                    decode_registry_framed(&SOURCE_EVENT_SCHEMA, &payload)
                }
                _ => decode_event(&payload),
            };
            match result {
                Ok(event) => {
                    decoded += 1;
                    assert!(encode_event(&event).is_ok());
                }
                Err(error) => {
                    refused += 1;
                    assert!(!error.to_string().is_empty());
                }
            }
        }
        assert_eq!(decoded + refused, cases);
        assert!(cases < 100 || refused > 0, "no mutated payload was refused");
    }
}
