//! The BEIR corpus source: `corpus.jsonl` of a BEIR-format folder, one document per line.
//!
//! Each line `{"_id": …, "title": …, "text": …}` becomes a `DOCUMENT` event whose source id is
//! the `_id`, so that relevance judgements (`qrels/test.tsv`) can be matched against the
//! `source_id`s the query service returns. A line that is not such an object is dead-lettered
//! with its line number.

mod source;

pub use source::read_corpus;
