//! A static embedding table distilled from the sentence model, for bulk backfills (the idea of
//! Model2Vec). Each vocabulary token's vector is the model's own sentence vector of that token
//! alone (`[CLS] token [SEP]`, mean-pooled); a text's vector is the Zipf-weighted mean of its
//! tokens' vectors, L2-normalised. There is no attention, hence no context ("not approved" is
//! "approved" plus a little "not"), but a text costs a few table lookups instead of a forward
//! pass: the speed and the quality loss are measured in docs/measurements.md.
//!
//! The table is computed once per model (`[model] kind = "static"` distils it on first use,
//! ~30,000 one-token forward passes) and kept next to the model files as `static-v2.f32`.

use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use tokenizers::Tokenizer;
use tracing::info;

use super::{EmbedConfig, Embedder};
use crate::SinkError;

const MAGIC: &[u8; 8] = b"EPGSTAT2";
/// Tokens per forward pass when distilling.
const DISTILL_BATCH: usize = 256;

/// One vector per vocabulary token and the weight of each token.
pub struct StaticTable {
    tokenizer: Tokenizer,
    dims: usize,
    vectors: Vec<f32>,
    weights: Vec<f32>,
}

impl std::fmt::Debug for StaticTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticTable")
            .field("tokens", &self.weights.len())
            .field("dims", &self.dims)
            .finish()
    }
}

/// SIF weight `a / (a + p)` of a token whose estimated probability follows Zipf's law from its
/// frequency rank (`p = 1 / ((rank + 1) · H)`, `H` the harmonic number of the vocabulary), with
/// `a = 1e-4`: "the" weighs almost nothing, rare words almost 1.
///
/// ```
/// use epigraph_sinks::embed::static_table::zipf_weight;
/// assert!(zipf_weight(0, 30_000) < 0.01);
/// assert!(zipf_weight(10_000, 30_000) > 0.9);
/// assert!(zipf_weight(100, 30_000) < zipf_weight(1_000, 30_000));
/// ```
pub fn zipf_weight(rank: usize, vocab: usize) -> f32 {
    let harmonic = (vocab.max(1) as f64).ln() + 0.5772;
    let p = 1.0 / ((rank as f64 + 1.0) * harmonic);
    let a = 1e-4;
    (a / (a + p)) as f32
}

/// The weight of every token id: zero for special tokens, Zipf by rank for words (a BERT
/// word-piece vocabulary lists words by frequency from "the" on), a middling weight for the
/// single characters and pieces listed before them (digits, punctuation).
fn weights(tokenizer: &Tokenizer) -> Vec<f32> {
    let vocab = tokenizer.get_vocab_size(true);
    let first_word = tokenizer.token_to_id("the").unwrap_or(0) as usize;
    let special: Vec<u32> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        .iter()
        .filter_map(|t| tokenizer.token_to_id(t))
        .collect();
    (0..vocab)
        .map(|id| {
            if special.contains(&(id as u32)) {
                0.0
            } else if id < first_word {
                zipf_weight(500, vocab)
            } else {
                zipf_weight(id - first_word, vocab)
            }
        })
        .collect()
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> SinkError + '_ {
    move |e| SinkError::Model(format!("{}: {e}", path.display()))
}

impl StaticTable {
    /// Where the table of `config`'s model is kept.
    pub fn file(config: &EmbedConfig) -> PathBuf {
        config.dir.join("static-v2.f32")
    }

    /// Distil the table from `model`: every token's sentence vector.
    pub(super) fn distill(model: &Embedder, config: &EmbedConfig) -> Result<Self, SinkError> {
        let tokenizer = model
            .tokenizer()
            .ok_or_else(|| SinkError::Model("distilling needs the model".into()))?;
        let vocab = tokenizer.get_vocab_size(true);
        let started = Instant::now();
        info!(
            tokens = vocab,
            model = %config.dir.display(),
            "distilling the static embedding table (once per model)"
        );
        let mut vectors = Vec::with_capacity(vocab * super::DIMENSIONS);
        let ids: Vec<u32> = (0..vocab as u32).collect();
        for (i, batch) in ids.chunks(DISTILL_BATCH).enumerate() {
            for vector in model.token_vectors(batch)? {
                vectors.extend(vector);
            }
            if i % 20 == 19 {
                info!(
                    done = (i + 1) * DISTILL_BATCH,
                    of = vocab,
                    "distilling the static embedding table"
                );
            }
        }
        info!(
            seconds = started.elapsed().as_secs_f64(),
            "distilled the static embedding table"
        );
        Ok(StaticTable::centred(tokenizer, super::DIMENSIONS, vectors))
    }

    /// The table over `vectors` as distilled, centred: the weighted mean of all token vectors
    /// is removed from each, since every one-token sentence shares a large common direction
    /// that would make any two texts look alike. The file keeps the centred vectors.
    fn centred(tokenizer: Tokenizer, dims: usize, mut vectors: Vec<f32>) -> Self {
        let weights = weights(&tokenizer);
        let mut mean = vec![0f64; dims];
        let total: f64 = weights
            .iter()
            .map(|w| f64::from(*w))
            .sum::<f64>()
            .max(1e-12);
        for (row, w) in vectors.chunks_exact(dims).zip(&weights) {
            for (m, x) in mean.iter_mut().zip(row) {
                *m += f64::from(*w) * f64::from(*x) / total;
            }
        }
        for row in vectors.chunks_exact_mut(dims) {
            for (x, m) in row.iter_mut().zip(&mean) {
                *x -= *m as f32;
            }
        }
        StaticTable {
            tokenizer,
            dims,
            vectors,
            weights,
        }
    }

    /// Write the table (magic, token count, dimensions, then the vectors as little-endian f32).
    pub(super) fn write(&self, file: &Path) -> Result<(), SinkError> {
        let partial = file.with_extension("partial");
        let mut out = BufWriter::new(std::fs::File::create(&partial).map_err(io_error(&partial))?);
        out.write_all(MAGIC).map_err(io_error(&partial))?;
        out.write_all(&(self.weights.len() as u32).to_le_bytes())
            .map_err(io_error(&partial))?;
        out.write_all(&(self.dims as u32).to_le_bytes())
            .map_err(io_error(&partial))?;
        for x in &self.vectors {
            out.write_all(&x.to_le_bytes())
                .map_err(io_error(&partial))?;
        }
        out.flush().map_err(io_error(&partial))?;
        drop(out);
        std::fs::rename(&partial, file).map_err(io_error(file))
    }

    /// Read a table written by [`StaticTable::write`], with the tokenizer of `config`'s model.
    pub(super) fn read(file: &Path, config: &EmbedConfig) -> Result<Self, SinkError> {
        let tokenizer_file = config.dir.join("tokenizer.json");
        let mut tokenizer = Tokenizer::from_file(&tokenizer_file)
            .map_err(|e| SinkError::Model(format!("tokenizer.json: {e}")))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(None)
            .map_err(|e| SinkError::Model(format!("truncation: {e}")))?;
        let mut input = BufReader::new(std::fs::File::open(file).map_err(io_error(file))?);
        let mut header = [0u8; 16];
        input.read_exact(&mut header).map_err(io_error(file))?;
        let word = |i: usize| u32::from_le_bytes(header[i..i + 4].try_into().expect("4 bytes"));
        let (tokens, dims) = (word(8) as usize, word(12) as usize);
        if &header[..8] != MAGIC
            || tokens != tokenizer.get_vocab_size(true)
            || dims != super::DIMENSIONS
        {
            return Err(SinkError::Model(format!(
                "{} is not a static table of this model ({tokens} tokens × {dims}); delete it \
                 to distil it again",
                file.display()
            )));
        }
        let mut bytes = vec![0u8; tokens * dims * 4];
        input.read_exact(&mut bytes).map_err(io_error(file))?;
        let vectors = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect();
        let weights = weights(&tokenizer);
        Ok(StaticTable {
            tokenizer,
            dims,
            vectors,
            weights,
        })
    }

    /// One L2-normalised vector per text: the weighted mean of its tokens' vectors.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, SinkError> {
        texts
            .iter()
            .map(|text| {
                let encoding = self
                    .tokenizer
                    .encode(*text, false)
                    .map_err(|e| SinkError::Model(format!("tokenizing: {e}")))?;
                let mut sum = vec![0f32; self.dims];
                for &id in encoding.get_ids() {
                    let id = id as usize;
                    let weight = self.weights.get(id).copied().unwrap_or(0.0);
                    if weight == 0.0 {
                        continue;
                    }
                    let row = &self.vectors[id * self.dims..(id + 1) * self.dims];
                    for (s, x) in sum.iter_mut().zip(row) {
                        *s += weight * x;
                    }
                }
                let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
                if norm > 1e-12 {
                    sum.iter_mut().for_each(|x| *x /= norm);
                } else {
                    // No token with a weight (an empty text): a unit vector, never NaN.
                    sum[0] = 1.0;
                }
                Ok(sum)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::EmbedKind;

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    /// Needs the model files. Distils into a copy of the model folder, reads the table back,
    /// and checks that the static vectors keep the model's sense of which texts are close.
    #[test]
    fn the_distilled_table_is_written_read_and_keeps_paraphrases_close() {
        let model = EmbedConfig::default();
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join("all-MiniLM-L6-v2");
        std::fs::create_dir_all(&copy).unwrap();
        for file in ["config.json", "tokenizer.json", "model.safetensors"] {
            std::fs::copy(model.dir.join(file), copy.join(file))
                .expect("model files (deploy/local/services.sh model)");
        }
        let config = EmbedConfig {
            dir: copy.clone(),
            kind: EmbedKind::Static,
            ..EmbedConfig::default()
        };
        let fast = Embedder::load(&config).unwrap();
        assert!(StaticTable::file(&config).is_file(), "the table is kept");
        assert_eq!(fast.model_id(), "all-MiniLM-L6-v2@256+static2");
        let again = Embedder::load(&config).unwrap();
        let texts = [
            "The board approved the budget for the Atlas launch.",
            "Atlas launch budget was approved by the board.",
            "The cafeteria serves soup on Fridays.",
            "",
        ];
        let vectors = fast.embed(&texts).unwrap();
        assert_eq!(vectors, again.embed(&texts).unwrap(), "read back exactly");
        for v in &vectors {
            assert_eq!(v.len(), crate::embed::DIMENSIONS);
            assert!((cosine(v, v) - 1.0).abs() < 1e-4, "normalised");
        }
        // Hostile and broken texts: finite unit vectors, each as it is alone.
        let hostile = crate::embed::hostile_texts();
        let hostile: Vec<&str> = hostile.iter().map(String::as_str).collect();
        let odd = fast.embed(&hostile).expect("hostile texts embed");
        for (text, v) in hostile.iter().zip(&odd) {
            let shown: String = text.chars().take(40).collect();
            assert_eq!(v.len(), crate::embed::DIMENSIONS, "{shown:?}");
            assert!(v.iter().all(|x| x.is_finite()), "{shown:?}: not finite");
            assert!((cosine(v, v) - 1.0).abs() < 1e-4, "{shown:?}: not unit");
        }
        assert_eq!(fast.embed(&hostile[3..4]).unwrap()[0], odd[3]);
        let (close, far) = (
            cosine(&vectors[0], &vectors[1]),
            cosine(&vectors[0], &vectors[2]),
        );
        eprintln!("static: paraphrase {close}, unrelated {far}");
        assert!(close > far + 0.2, "paraphrase {close}, unrelated {far}");
        // A one-token text's static vector is (the centred) model's own vector of it: closer
        // to the model's vector of that word than of another.
        let full = Embedder::load(&EmbedConfig {
            dir: copy,
            ..EmbedConfig::default()
        })
        .unwrap();
        assert_eq!(full.model_id(), "all-MiniLM-L6-v2@256");
        let budget = &fast.embed(&["budget"]).unwrap()[0];
        let model = full.embed(&["budget", "cafeteria"]).unwrap();
        let (same, other) = (cosine(budget, &model[0]), cosine(budget, &model[1]));
        assert!(same > other + 0.2, "{same} vs {other}");
    }
}
