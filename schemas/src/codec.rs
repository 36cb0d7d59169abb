//! Avro single-object encoding of [`SourceEvent`]s.
//!
//! Every payload starts with the spec's marker `C3 01` and the 8-byte little-endian CRC-64-AVRO
//! (Rabin) fingerprint of the writer schema's canonical form, so a consumer knows which schema
//! wrote it; the datum is then resolved against the current reader schema.

use std::sync::LazyLock;

use apache_avro::rabin::Rabin;
use apache_avro::{Schema, from_avro_datum, from_value, to_avro_datum, to_value};

use crate::SourceEvent;

/// The current schema of [`SourceEvent`] (`avsc/source_event.avsc`).
pub const SOURCE_EVENT_AVSC: &str = include_str!("../avsc/source_event.avsc");
/// The first published version, frozen (`avsc/source_event.v0.avsc`).
pub const SOURCE_EVENT_V0_AVSC: &str = include_str!("../avsc/source_event.v0.avsc");

const MARKER: [u8; 2] = [0xC3, 0x01];
const HEADER_LEN: usize = 10;

/// The parsed current schema.
pub static SOURCE_EVENT_SCHEMA: LazyLock<Schema> =
    LazyLock::new(|| Schema::parse_str(SOURCE_EVENT_AVSC).expect("source_event.avsc is valid"));

/// Every schema version a consumer can read, with its fingerprint.
static WRITER_SCHEMAS: LazyLock<Vec<([u8; 8], Schema)>> = LazyLock::new(|| {
    [SOURCE_EVENT_AVSC, SOURCE_EVENT_V0_AVSC]
        .iter()
        .map(|text| {
            let schema = Schema::parse_str(text).expect("bundled .avsc is valid");
            (fingerprint(&schema), schema)
        })
        .collect()
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
    encode_with(&SOURCE_EVENT_SCHEMA, event)
}

/// Encode any serializable value with the given writer schema (used by tests of old versions).
pub fn encode_with<T: serde::Serialize>(schema: &Schema, value: &T) -> Result<Vec<u8>, CodecError> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(&MARKER);
    out.extend_from_slice(&fingerprint(schema));
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
    let value = from_avro_datum(writer, &mut datum, Some(&SOURCE_EVENT_SCHEMA))?;
    Ok(from_value::<SourceEvent>(&value)?)
}

/// The bundled `.avsc` files as `(file name, text)`, for `epigraph schemas export`.
pub fn schema_files() -> Vec<(&'static str, &'static str)> {
    vec![("org.epigraph.events.v1.SourceEvent.avsc", SOURCE_EVENT_AVSC)]
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
        let v0 = Schema::parse_str(SOURCE_EVENT_V0_AVSC).unwrap();
        SchemaCompatibility::can_read(&v0, &SOURCE_EVENT_SCHEMA).expect("current reads v0");
    }

    #[test]
    fn unknown_fingerprint_and_truncated_datum_are_errors() {
        let mut bytes = encode_event(&full_event()).unwrap();
        let truncated = &bytes[..bytes.len() / 2];
        assert!(matches!(decode_event(truncated), Err(CodecError::Avro(_))));
        bytes[3] ^= 0xFF;
        assert!(matches!(
            decode_event(&bytes),
            Err(CodecError::UnknownSchema(_))
        ));
    }
}
