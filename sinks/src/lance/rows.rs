use std::sync::Arc;

use lancedb::arrow::arrow_array::types::Float32Type;
use lancedb::arrow::arrow_array::{
    Array, ArrayRef, FixedSizeListArray, Int64Array, RecordBatch, StringArray,
};
use lancedb::arrow::arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::embed::DIMENSIONS;

/// One memory object as stored in the `memory` table.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryRow {
    /// Stable id.
    pub id: String,
    /// Tenant.
    pub tenant: String,
    /// Epistemic type, upper case (`DECISION`, …).
    pub memory_type: String,
    /// Title of the source.
    pub title: Option<String>,
    /// The object's text.
    pub text: String,
    /// Source item id (provenance).
    pub source_id: String,
    /// Source version (provenance).
    pub source_version: String,
    /// Character span start in the source body.
    pub span_start: i64,
    /// Character span end.
    pub span_end: i64,
    /// When it became valid (ms since the Unix epoch).
    pub t_valid: Option<i64>,
    /// When it stopped being valid, if it did.
    pub t_invalid: Option<i64>,
    /// Hash of the content: unchanged rows are skipped.
    pub content_hash: String,
}

/// The arrow schema of the `memory` table.
pub fn memory_schema() -> SchemaRef {
    let text = |name: &str, nullable: bool| Field::new(name, DataType::Utf8, nullable);
    Arc::new(Schema::new(vec![
        text("id", false),
        text("tenant", false),
        text("memory_type", false),
        text("title", true),
        text("text", false),
        text("source_id", false),
        text("source_version", false),
        Field::new("span_start", DataType::Int64, false),
        Field::new("span_end", DataType::Int64, false),
        Field::new("t_valid", DataType::Int64, true),
        Field::new("t_invalid", DataType::Int64, true),
        text("content_hash", false),
        text("view", false),
        text("text_hash", false),
        Field::new("written_at", DataType::Int64, false),
        Field::new(
            "vector",
            DataType::FixedSizeList(
                Arc::new(Field::new("item", DataType::Float32, true)),
                DIMENSIONS as i32,
            ),
            true,
        ),
        text("vector_model", true),
    ]))
}

/// What a write stamps on every row besides its content.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stamp<'a> {
    /// The view (topic prefix) of the pipeline writing the rows.
    pub view: &'a str,
    /// The embedding model's id, part of each row's `text_hash`, and the `vector_model` of the
    /// rows written with a vector.
    pub model: &'a str,
    /// When the rows are written (ms since the Unix epoch).
    pub written_at: i64,
}

/// The embedding cache key of a text: hex SHA-256 of the model id, a NUL and the text. Two rows
/// with the same key have the same vector, whichever row it was computed for.
///
/// ```
/// use epigraph_sinks::lance::text_hash;
/// let a = text_hash("all-MiniLM-L6-v2@256", "We ship in June.");
/// assert_eq!(a, text_hash("all-MiniLM-L6-v2@256", "We ship in June."));
/// assert_ne!(a, text_hash("all-MiniLM-L6-v2@128", "We ship in June."));
/// assert_eq!(a.len(), 64);
/// ```
pub fn text_hash(model: &str, text: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(model.as_bytes());
    hasher.update([0u8]);
    hasher.update(text.as_bytes());
    hex::encode(hasher.finalize())
}

/// Rows and their vectors (`None` when not embedded yet) as one record batch, stamped with the
/// view, the text hashes under the model and the write time.
pub(crate) fn to_batch(
    rows: &[MemoryRow],
    vectors: &[Option<Vec<f32>>],
    stamp: Stamp<'_>,
) -> Result<RecordBatch, lancedb::arrow::arrow_schema::ArrowError> {
    let strings = |f: &dyn Fn(&MemoryRow) -> Option<&str>| -> ArrayRef {
        Arc::new(rows.iter().map(f).collect::<StringArray>())
    };
    let ints = |f: &dyn Fn(&MemoryRow) -> Option<i64>| -> ArrayRef {
        Arc::new(rows.iter().map(f).collect::<Int64Array>())
    };
    let vector = FixedSizeListArray::from_iter_primitive::<Float32Type, _, _>(
        vectors.iter().map(|v| {
            v.as_ref()
                .map(|v| v.iter().map(|x| Some(*x)).collect::<Vec<_>>())
        }),
        DIMENSIONS as i32,
    );
    RecordBatch::try_new(
        memory_schema(),
        vec![
            strings(&|r| Some(&r.id)),
            strings(&|r| Some(&r.tenant)),
            strings(&|r| Some(&r.memory_type)),
            strings(&|r| r.title.as_deref()),
            strings(&|r| Some(&r.text)),
            strings(&|r| Some(&r.source_id)),
            strings(&|r| Some(&r.source_version)),
            ints(&|r| Some(r.span_start)),
            ints(&|r| Some(r.span_end)),
            ints(&|r| r.t_valid),
            ints(&|r| r.t_invalid),
            strings(&|r| Some(&r.content_hash)),
            Arc::new(StringArray::from(vec![stamp.view; rows.len()])) as ArrayRef,
            Arc::new(
                rows.iter()
                    .map(|r| Some(text_hash(stamp.model, &r.text)))
                    .collect::<StringArray>(),
            ) as ArrayRef,
            Arc::new(Int64Array::from(vec![stamp.written_at; rows.len()])) as ArrayRef,
            Arc::new(vector) as Arc<dyn Array>,
            vector_models(vectors, stamp.model),
        ],
    )
}

/// The `vector_model` column: the model's id where a row has a vector, null where it waits.
pub(crate) fn vector_models(vectors: &[Option<Vec<f32>>], model: &str) -> ArrayRef {
    Arc::new(
        vectors
            .iter()
            .map(|v| v.as_ref().map(|_| model))
            .collect::<StringArray>(),
    )
}

/// The rows of a result batch that has every column of [`memory_schema`] but the vector.
#[cfg(test)]
pub fn rows_of(batch: &RecordBatch) -> Vec<MemoryRow> {
    let text = |name: &str| string_column(batch, name);
    let int = |name: &str| {
        batch
            .column_by_name(name)
            .and_then(|c| c.as_any().downcast_ref::<Int64Array>())
    };
    let (
        Some(id),
        Some(tenant),
        Some(memory_type),
        Some(title),
        Some(body),
        Some(source_id),
        Some(source_version),
        Some(span_start),
        Some(span_end),
        Some(t_valid),
        Some(t_invalid),
        Some(content_hash),
    ) = (
        text("id"),
        text("tenant"),
        text("memory_type"),
        text("title"),
        text("text"),
        text("source_id"),
        text("source_version"),
        int("span_start"),
        int("span_end"),
        int("t_valid"),
        int("t_invalid"),
        text("content_hash"),
    )
    else {
        return Vec::new();
    };
    let opt = |a: &Int64Array, i: usize| (!a.is_null(i)).then(|| a.value(i));
    (0..batch.num_rows())
        .map(|i| MemoryRow {
            id: id.value(i).to_string(),
            tenant: tenant.value(i).to_string(),
            memory_type: memory_type.value(i).to_string(),
            title: (!title.is_null(i)).then(|| title.value(i).to_string()),
            text: body.value(i).to_string(),
            source_id: source_id.value(i).to_string(),
            source_version: source_version.value(i).to_string(),
            span_start: span_start.value(i),
            span_end: span_end.value(i),
            t_valid: opt(t_valid, i),
            t_invalid: opt(t_invalid, i),
            content_hash: content_hash.value(i).to_string(),
        })
        .collect()
}

/// A string column of a result batch, by name.
pub(crate) fn string_column<'a>(batch: &'a RecordBatch, name: &str) -> Option<&'a StringArray> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<StringArray>())
}

/// A SQL string literal for LanceDB filters (single quotes doubled).
pub(crate) fn quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_are_doubled_in_filter_literals() {
        assert_eq!(quote("o'neil"), "'o''neil'");
    }

    #[test]
    fn a_batch_keeps_missing_vectors_null() {
        let row = MemoryRow {
            id: "a".into(),
            tenant: "t".into(),
            memory_type: "NARRATIVE".into(),
            title: None,
            text: "x".into(),
            source_id: "s".into(),
            source_version: "v".into(),
            span_start: 0,
            span_end: 1,
            t_valid: None,
            t_invalid: None,
            content_hash: "h".into(),
        };
        let stamp = Stamp {
            view: "epigraph",
            model: "m",
            written_at: 7,
        };
        let batch = to_batch(
            &[row.clone(), row.clone()],
            &[Some(vec![0.5; DIMENSIONS]), None],
            stamp,
        )
        .unwrap();
        let hashes = string_column(&batch, "text_hash").unwrap();
        assert_eq!(hashes.value(0), text_hash("m", "x"));
        let vectors = batch.column_by_name("vector").unwrap();
        assert_eq!((batch.num_rows(), vectors.null_count()), (2, 1));
        assert_eq!(rows_of(&batch), vec![row.clone(), row]);
    }
}
