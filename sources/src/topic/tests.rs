use epigraph_schemas::{Op, SourceKind};
use serde_json::json;

use super::*;

fn source(extra: serde_json::Value) -> TopicSource {
    let mut base = json!({
        "name": "notes", "topic": "crm.notes", "tenant": "acme", "kind": "document",
        "source_id": "/id", "body": "/text"
    });
    base.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let source: TopicSource = serde_json::from_value(base).unwrap();
    source.check().unwrap();
    source
}

fn map(
    source: &TopicSource,
    key: Option<&[u8]>,
    value: Option<serde_json::Value>,
) -> Result<Option<epigraph_schemas::SourceEvent>, BadRecord> {
    map_record(
        source,
        &Record {
            key,
            value,
            timestamp: Some(1_700_000_000_000),
        },
        5,
    )
}

#[test]
fn a_plain_row_maps_every_field_and_its_version_covers_the_metadata() {
    let source = source(json!({
        "title": "/subject", "author": "/by", "occurred_at": "/at", "time_unit": "s",
        "thread_id": "/account", "extras": {"status": "/status", "amount": "/amount"}
    }));
    let row = json!({"id": "n1", "subject": "Pricing", "text": "We raise the price.",
        "by": {"name": "Maria Lopez", "email": "maria@acme.example"}, "at": 1_764_000_000,
        "account": 42, "status": "open", "amount": 12.5});
    let event = map(&source, None, Some(row.clone())).unwrap().unwrap();
    assert_eq!(event.source_kind, SourceKind::Document);
    assert_eq!(event.title.as_deref(), Some("Pricing"));
    assert_eq!(event.occurred_at, Some(1_764_000_000_000));
    assert_eq!(
        event.authors[0].address.as_deref(),
        Some("maria@acme.example")
    );
    assert_eq!(event.authors[0].name.as_deref(), Some("Maria Lopez"));
    assert_eq!(event.thread_id.as_deref(), Some("42"));
    assert_eq!(event.extras["status"], "open");
    assert_eq!(event.extras["amount"], "12.5");
    assert_eq!(event.extras["origin_topic"], "crm.notes");
    let mut reassigned = row;
    reassigned["status"] = json!("closed");
    let again = map(&source, None, Some(reassigned)).unwrap().unwrap();
    assert_ne!(
        event.version, again.version,
        "a status change is a new version"
    );
}

#[test]
fn tombstones_take_their_id_from_the_key_plain_or_connect_wrapped() {
    let by_key = source(json!({"source_id": "key"}));
    let event = map(&by_key, Some(b"n1"), None).unwrap().unwrap();
    assert_eq!((event.op, event.source_id.as_str()), (Op::Delete, "n1"));
    // A JsonConverter key with schemas: {"schema":…, "payload": {"id": …}}.
    let by_pointer = source(json!({}));
    let key = br#"{"schema": {"type": "struct"}, "payload": {"id": "n2"}}"#;
    let event = map(&by_pointer, Some(key), None).unwrap().unwrap();
    assert_eq!((event.op, event.source_id.as_str()), (Op::Delete, "n2"));
    assert!(
        map(&by_pointer, None, None)
            .unwrap_err()
            .to_string()
            .contains("no id")
    );
}

#[test]
fn debezium_reads_after_deletes_before_and_skips_truncates() {
    let source = source(json!({"envelope": "debezium", "source_id_prefix": "crm/"}));
    let create = json!({"op": "c", "before": null, "after": {"id": 1, "text": "Hello"}});
    assert_eq!(
        map(&source, None, Some(create)).unwrap().unwrap().source_id,
        "crm/1"
    );
    let snapshot = json!({"op": "r", "after": {"id": 2, "text": "Read"}});
    assert_eq!(
        map(&source, None, Some(snapshot)).unwrap().unwrap().op,
        Op::Upsert
    );
    // Delete without `before` (REPLICA IDENTITY DEFAULT sends only the key).
    let delete = json!({"op": "d", "before": null, "after": null});
    let event = map(&source, Some(br#"{"id": 3}"#), Some(delete))
        .unwrap()
        .unwrap();
    assert_eq!((event.op, event.source_id.as_str()), (Op::Delete, "crm/3"));
    assert!(
        map(&source, None, Some(json!({"op": "t"})))
            .unwrap()
            .is_none()
    );
    assert!(
        map(&source, None, Some(json!({"after": {}})))
            .unwrap_err()
            .to_string()
            .contains("without \"op\"")
    );
    assert!(
        map(&source, None, Some(json!({"op": "x"})))
            .unwrap_err()
            .to_string()
            .contains("unknown")
    );
}

#[test]
fn missing_or_wrong_fields_say_which_key_is_wrong() {
    let source = source(json!({"occurred_at": "/at"}));
    let no_text = map(&source, None, Some(json!({"id": 1})))
        .unwrap_err()
        .to_string();
    assert!(no_text.contains("body = \"/text\""), "{no_text}");
    let blank = map(&source, None, Some(json!({"id": 1, "text": "  "})))
        .unwrap_err()
        .to_string();
    assert!(blank.contains("empty"), "{blank}");
    let bad_time = map(
        &source,
        None,
        Some(json!({"id": 1, "text": "x", "at": "yesterday"})),
    )
    .unwrap_err()
    .to_string();
    assert!(bad_time.contains("not a time"), "{bad_time}");
    let rfc = map(
        &source,
        None,
        Some(json!({"id": 1, "text": "x", "at": "2026-12-01T10:00:00Z"})),
    )
    .unwrap()
    .unwrap();
    assert_eq!(rfc.occurred_at, Some(1_796_119_200_000));
    let array = map(&source, None, Some(json!([1, 2])))
        .unwrap_err()
        .to_string();
    assert!(array.contains("an array"), "{array}");
    let config = TopicSource {
        kind: "fax".into(),
        ..source.clone()
    };
    assert!(config.check().unwrap_err().to_string().contains("kind"));
}

#[test]
fn avro_in_the_registry_wire_format_reads_as_json() {
    let schema = apache_avro::Schema::parse_str(
        r#"{"type": "record", "name": "Note", "fields": [
            {"name": "id", "type": "string"}, {"name": "text", "type": "string"},
            {"name": "status", "type": ["null", "string"], "default": null}]}"#,
    )
    .unwrap();
    let mut record = apache_avro::types::Record::new(&schema).unwrap();
    record.put("id", "n9");
    record.put("text", "We chose Postgres.");
    record.put(
        "status",
        apache_avro::types::Value::Union(0, Box::new(apache_avro::types::Value::Null)),
    );
    let datum = apache_avro::to_avro_datum(&schema, record).unwrap();
    let mut framed = vec![0, 0, 0, 0, 9];
    framed.extend(datum);
    let (id, datum) = wire_frame(&framed).unwrap();
    assert_eq!(id, 9);
    let value = avro_to_json(&schema, datum).unwrap();
    let event = map(&source(json!({})), None, Some(value)).unwrap().unwrap();
    assert_eq!(event.source_id, "n9");
    assert_eq!(event.body, "We chose Postgres.");
    assert!(
        avro_to_json(&schema, &[0xff])
            .unwrap_err()
            .to_string()
            .contains("does not fit")
    );
}
