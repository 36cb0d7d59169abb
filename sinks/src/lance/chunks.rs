//! The `chunks` table: each live source version's text in overlapping chunks (Mind Graph's
//! fallback for what the extractor did not turn into memory objects), with a full-text index
//! and vectors filled behind the rows like the memory table's.
//!
//! Tokens are estimated as characters / 4 (as the query service's context blocks do), so a
//! chunk of ~1,200 tokens is ~4,800 characters and consecutive chunks share ~400 characters.
//! A chunk ends at the last paragraph break, else sentence end, else whitespace in the last
//! fifth of its window (a hard cut only when there is none); the next one starts `overlap`
//! characters before that end, moved forward to the start of a word.

use std::sync::Arc;

use lancedb::arrow::arrow_array::types::Float32Type;
use lancedb::arrow::arrow_array::{
    Array, ArrayRef, FixedSizeListArray, Int64Array, RecordBatch, StringArray,
};
use lancedb::arrow::arrow_schema::{DataType, Field, Schema, SchemaRef};
use sha2::{Digest, Sha256};

use super::rows::{Stamp, text_hash};
use crate::embed::DIMENSIONS;

/// One chunk of a source version's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkRow {
    /// `<tenant>/<source_id>@<version>#<index>` hashed: stable for a version's chunk.
    pub id: String,
    /// Tenant.
    pub tenant: String,
    /// Source item id.
    pub source_id: String,
    /// Source version (content hash of the version).
    pub version: String,
    /// Position of the chunk in the version, from 0.
    pub chunk_index: i64,
    /// Character span start in the source body.
    pub char_start: i64,
    /// Character span end (exclusive).
    pub char_end: i64,
    /// Title of the source.
    pub title: Option<String>,
    /// The chunk's text.
    pub text: String,
    /// Hash of the chunk's content (for reconciliation).
    pub content_hash: String,
}

/// How sources are cut into chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunking {
    /// Estimated tokens per chunk (characters / 4).
    pub tokens: usize,
    /// Estimated tokens shared by consecutive chunks.
    pub overlap_tokens: usize,
}

impl Chunking {
    /// Character spans `(start, end)` of the chunks of `text` (character offsets).
    ///
    /// ```
    /// use epigraph_sinks::lance::Chunking;
    /// let chunking = Chunking { tokens: 5, overlap_tokens: 1 }; // 20 chars, 4 shared
    /// let text = "one two three four five six seven eight nine ten";
    /// let spans = chunking.spans(text);
    /// assert_eq!(spans.first().unwrap().0, 0);
    /// assert_eq!(spans.last().unwrap().1, text.chars().count());
    /// for pair in spans.windows(2) {
    ///     assert!(pair[1].0 < pair[0].1, "consecutive chunks overlap");
    ///     assert!(pair[0].1 - pair[0].0 <= 20);
    /// }
    /// assert!(Chunking { tokens: 1200, overlap_tokens: 100 }.spans("").is_empty());
    /// ```
    pub fn spans(&self, text: &str) -> Vec<(usize, usize)> {
        let chars: Vec<char> = text.chars().collect();
        let max = (self.tokens * 4).max(8);
        let overlap = (self.overlap_tokens * 4).min(max / 2);
        let mut spans = Vec::new();
        let mut start = 0;
        while start < chars.len() && chars[start..].iter().any(|c| !c.is_whitespace()) {
            let limit = (start + max).min(chars.len());
            let end = if limit == chars.len() {
                limit
            } else {
                let floor = start + max * 4 / 5;
                let window = |pred: &dyn Fn(usize) -> bool| {
                    (floor..limit).rev().find(|&i| pred(i)).map(|i| i + 1)
                };
                window(&|i| chars[i] == '\n' && i > 0 && chars[i - 1] == '\n')
                    .or_else(|| {
                        window(&|i| {
                            matches!(chars[i], '.' | '!' | '?')
                                && chars.get(i + 1).is_some_and(|c| c.is_whitespace())
                        })
                    })
                    .or_else(|| window(&|i| chars[i].is_whitespace()))
                    .unwrap_or(limit)
            };
            spans.push((start, end));
            if end == chars.len() {
                break;
            }
            // The next chunk starts `overlap` before the end, at the start of a word (the
            // next one, or the one before when the word runs to the end: chunks always
            // share something), and always after this chunk's start.
            let target = end.saturating_sub(overlap).max(start + 1);
            let word_start = |i: usize| i == 0 || chars[i - 1].is_whitespace();
            start = (target..end)
                .find(|&i| word_start(i))
                .or_else(|| (start + 1..target).rev().find(|&i| word_start(i)))
                .unwrap_or(end);
        }
        spans
    }

    /// The chunks of a source version's body.
    pub fn chunks(
        &self,
        tenant: &str,
        source_id: &str,
        version: &str,
        title: Option<&str>,
        body: &str,
    ) -> Vec<ChunkRow> {
        let chars: Vec<char> = body.chars().collect();
        self.spans(body)
            .into_iter()
            .enumerate()
            .map(|(index, (start, end))| {
                let text: String = chars[start..end].iter().collect();
                let text = text.trim().to_string();
                let id = hex::encode(Sha256::digest(
                    format!("chunk\0{tenant}\0{source_id}\0{version}\0{index}").as_bytes(),
                ));
                let content_hash = hex::encode(Sha256::digest(
                    format!(
                        "{id}\0{start}\0{end}\0{}\0{text}",
                        title.unwrap_or_default()
                    )
                    .as_bytes(),
                ));
                ChunkRow {
                    id,
                    tenant: tenant.to_string(),
                    source_id: source_id.to_string(),
                    version: version.to_string(),
                    chunk_index: index as i64,
                    char_start: start as i64,
                    char_end: end as i64,
                    title: title.map(str::to_string),
                    text,
                    content_hash,
                }
            })
            .collect()
    }
}

/// The arrow schema of the `chunks` table.
pub fn chunks_schema() -> SchemaRef {
    let text = |name: &str, nullable: bool| Field::new(name, DataType::Utf8, nullable);
    let int = |name: &str| Field::new(name, DataType::Int64, false);
    Arc::new(Schema::new(vec![
        text("id", false),
        text("tenant", false),
        text("source_id", false),
        text("version", false),
        int("chunk_index"),
        int("char_start"),
        int("char_end"),
        text("title", true),
        text("text", false),
        text("content_hash", false),
        text("view", false),
        text("text_hash", false),
        int("written_at"),
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

/// Chunks and their vectors (`None` when not embedded yet) as one record batch.
pub(crate) fn chunk_batch(
    rows: &[ChunkRow],
    vectors: &[Option<Vec<f32>>],
    stamp: Stamp<'_>,
) -> Result<RecordBatch, lancedb::arrow::arrow_schema::ArrowError> {
    let strings = |f: &dyn Fn(&ChunkRow) -> Option<String>| -> ArrayRef {
        Arc::new(rows.iter().map(f).collect::<StringArray>())
    };
    let ints = |f: &dyn Fn(&ChunkRow) -> i64| -> ArrayRef {
        Arc::new(rows.iter().map(|r| Some(f(r))).collect::<Int64Array>())
    };
    let vector = FixedSizeListArray::from_iter_primitive::<Float32Type, _, _>(
        vectors.iter().map(|v| {
            v.as_ref()
                .map(|v| v.iter().map(|x| Some(*x)).collect::<Vec<_>>())
        }),
        DIMENSIONS as i32,
    );
    RecordBatch::try_new(
        chunks_schema(),
        vec![
            strings(&|r| Some(r.id.clone())),
            strings(&|r| Some(r.tenant.clone())),
            strings(&|r| Some(r.source_id.clone())),
            strings(&|r| Some(r.version.clone())),
            ints(&|r| r.chunk_index),
            ints(&|r| r.char_start),
            ints(&|r| r.char_end),
            strings(&|r| r.title.clone()),
            strings(&|r| Some(r.text.clone())),
            strings(&|r| Some(r.content_hash.clone())),
            strings(&|_| Some(stamp.view.to_string())),
            strings(&|r| Some(text_hash(stamp.model, &r.text))),
            ints(&|_| stamp.written_at),
            Arc::new(vector) as Arc<dyn Array>,
            super::rows::vector_models(vectors, stamp.model),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 12,000-character document of 40-character sentences, in paragraphs of five.
    fn document() -> String {
        let mut text = String::new();
        for i in 0..300 {
            text.push_str(&format!("Sentence number {i:04} says nothing new. "));
            if i % 5 == 4 {
                text.push_str("\n\n");
            }
        }
        text
    }

    #[test]
    fn chunks_of_1200_tokens_overlap_by_about_100_and_cover_the_text() {
        let chunking = Chunking {
            tokens: 1200,
            overlap_tokens: 100,
        };
        let text = document();
        let chars: Vec<char> = text.chars().collect();
        let spans = chunking.spans(&text);
        assert_eq!(spans.len(), 3, "{spans:?}");
        assert_eq!(spans[0].0, 0);
        assert_eq!(spans.last().unwrap().1, chars.len());
        for (i, (start, end)) in spans.iter().enumerate() {
            assert!(end - start <= 4800, "{spans:?}");
            if *end < chars.len() {
                // Cut after a paragraph break, in the last fifth of the window.
                assert!(end - start >= 3840, "{spans:?}");
                assert_eq!(&chars[end - 2..*end], &['\n', '\n'], "chunk {i}");
            }
        }
        for pair in spans.windows(2) {
            let shared = pair[0].1 - pair[1].0;
            assert!((380..=400).contains(&shared), "{shared} characters shared");
            assert!(chars[pair[1].0 - 1].is_whitespace(), "starts at a word");
        }
        let rows = chunking.chunks("acme", "a.md", "v1", Some("A"), &text);
        assert_eq!(rows.len(), 3);
        assert_eq!(
            rows.iter().map(|r| r.chunk_index).collect::<Vec<_>>(),
            [0, 1, 2]
        );
        assert!(rows[0].text.starts_with("Sentence number 0000"));
        let again = chunking.chunks("acme", "a.md", "v2", Some("A"), &text);
        assert_ne!(rows[0].id, again[0].id, "ids are per version");
        assert_eq!(rows[0].text, again[0].text);
    }

    #[test]
    fn a_text_without_breaks_is_cut_hard_and_short_texts_are_one_chunk() {
        let chunking = Chunking {
            tokens: 10,
            overlap_tokens: 2,
        };
        let text = "x".repeat(100);
        let spans = chunking.spans(&text);
        assert_eq!(spans[0], (0, 40));
        assert!(spans.windows(2).all(|p| p[1].0 > p[0].0));
        assert_eq!(spans.last().unwrap().1, 100);
        assert_eq!(chunking.spans("A short note."), vec![(0, 13)]);
        assert!(chunking.spans("  \n ").is_empty());
    }
}
