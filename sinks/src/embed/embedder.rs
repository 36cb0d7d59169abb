use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config as BertConfig, DTYPE};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::static_table::StaticTable;
use super::{EmbedConfig, EmbedKind};
use crate::SinkError;

/// Dimensions of an all-MiniLM-L6-v2 embedding.
pub const DIMENSIONS: usize = 384;

/// A loaded sentence embedder: the transformer itself, or its static token table
/// ([`EmbedKind::Static`]). Cheap to share behind an `Arc`; `embed` is CPU-bound, so call it
/// from a blocking thread in async code.
pub struct Embedder {
    inner: Inner,
    batch_size: usize,
    model_id: String,
}

enum Inner {
    Model(Box<Model>),
    Static(Box<StaticTable>),
}

/// The transformer and its tokenizer.
struct Model {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("model_id", &self.model_id)
            .field("batch_size", &self.batch_size)
            .finish()
    }
}

fn model_error(context: &str) -> impl FnOnce(candle_core::Error) -> SinkError + '_ {
    move |e| SinkError::Model(format!("{context}: {e}"))
}

impl Embedder {
    /// Load the embedder `config.kind` names from `config.dir`. The static table is distilled
    /// from the model the first time (a few seconds of forward passes, written next to the
    /// model files) and read from there afterwards.
    pub fn load(config: &EmbedConfig) -> Result<Self, SinkError> {
        match config.kind {
            EmbedKind::Model => Self::load_model(config),
            EmbedKind::Static => {
                let file = StaticTable::file(config);
                let table = if file.is_file() {
                    StaticTable::read(&file, config)?
                } else {
                    let model = Self::load_model(config)?;
                    let table = StaticTable::distill(&model, config)?;
                    table.write(&file)?;
                    table
                };
                Ok(Embedder {
                    inner: Inner::Static(Box::new(table)),
                    batch_size: config.batch_size.max(1),
                    model_id: config.model_id(),
                })
            }
        }
    }

    fn load_model(config: &EmbedConfig) -> Result<Self, SinkError> {
        let dir = &config.dir;
        let missing = ["config.json", "tokenizer.json", "model.safetensors"]
            .into_iter()
            .filter(|f| !dir.join(f).is_file())
            .collect::<Vec<_>>();
        if !missing.is_empty() {
            return Err(SinkError::Model(format!(
                "{} lacks {}; fetch the model with `deploy/local/services.sh model`",
                dir.display(),
                missing.join(", ")
            )));
        }
        let config_text = std::fs::read_to_string(dir.join("config.json"))
            .map_err(SinkError::io(dir.join("config.json")))?;
        let bert_config: BertConfig = serde_json::from_str(&config_text)
            .map_err(|e| SinkError::Model(format!("config.json: {e}")))?;
        let weights = std::fs::read(dir.join("model.safetensors"))
            .map_err(SinkError::io(dir.join("model.safetensors")))?;
        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(weights, DTYPE, &device)
            .map_err(model_error("weights"))?;
        let model = BertModel::load(vb, &bert_config).map_err(model_error("building the model"))?;
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| SinkError::Model(format!("tokenizer.json: {e}")))?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..Default::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: config.max_tokens,
                ..Default::default()
            }))
            .map_err(|e| SinkError::Model(format!("truncation: {e}")))?;
        Ok(Embedder {
            inner: Inner::Model(Box::new(Model {
                model,
                tokenizer,
                device,
            })),
            batch_size: config.batch_size.max(1),
            model_id: EmbedConfig {
                kind: EmbedKind::Model,
                ..config.clone()
            }
            .model_id(),
        })
    }

    /// Whether this is the static table (the bulk-backfill path) rather than the transformer.
    pub fn is_static(&self) -> bool {
        matches!(self.inner, Inner::Static(_))
    }

    /// The id of the vectors this embedder computes ([`EmbedConfig::model_id`]).
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// Embed texts: one L2-normalised 384-d vector per text, in order.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, SinkError> {
        match &self.inner {
            Inner::Static(table) => table.embed(texts),
            Inner::Model(model) => {
                let mut out = Vec::with_capacity(texts.len());
                for chunk in texts.chunks(self.batch_size) {
                    out.extend(model.embed_batch(chunk)?);
                }
                Ok(out)
            }
        }
    }
}

impl Model {
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, SinkError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| SinkError::Model(format!("tokenizing: {e}")))?;
        let rows = encodings.len();
        let width = encodings.first().map(|e| e.get_ids().len()).unwrap_or(0);
        let flat = |f: &dyn Fn(&tokenizers::Encoding) -> &[u32]| -> Vec<u32> {
            encodings
                .iter()
                .flat_map(|e| f(e).iter().copied())
                .collect()
        };
        let ids = Tensor::from_vec(flat(&|e| e.get_ids()), (rows, width), &self.device)
            .map_err(model_error("ids"))?;
        let types = Tensor::from_vec(flat(&|e| e.get_type_ids()), (rows, width), &self.device)
            .map_err(model_error("types"))?;
        let mask = Tensor::from_vec(
            flat(&|e| e.get_attention_mask()),
            (rows, width),
            &self.device,
        )
        .map_err(model_error("mask"))?;
        let hidden = self
            .model
            .forward(&ids, &types, Some(&mask))
            .map_err(model_error("forward pass"))?;
        let pooled = mean_pool(&hidden, &mask).map_err(model_error("pooling"))?;
        pooled
            .to_vec2::<f32>()
            .map_err(model_error("reading vectors"))
    }
}

impl Model {
    /// The sentence vector of each token alone (`[CLS] token [SEP]`, mean-pooled and
    /// normalised, as [`Embedder::embed`] computes it for a one-token text).
    fn token_vectors(&self, ids: &[u32]) -> Result<Vec<Vec<f32>>, SinkError> {
        let special = |name: &str| {
            self.tokenizer
                .token_to_id(name)
                .ok_or_else(|| SinkError::Model(format!("the tokenizer has no {name}")))
        };
        let (cls, sep) = (special("[CLS]")?, special("[SEP]")?);
        let rows = ids.len();
        let flat: Vec<u32> = ids.iter().flat_map(|id| [cls, *id, sep]).collect();
        let ids = Tensor::from_vec(flat, (rows, 3), &self.device).map_err(model_error("ids"))?;
        let types = ids.zeros_like().map_err(model_error("types"))?;
        let mask = ids.ones_like().map_err(model_error("mask"))?;
        let hidden = self
            .model
            .forward(&ids, &types, Some(&mask))
            .map_err(model_error("forward pass"))?;
        mean_pool(&hidden, &mask)
            .map_err(model_error("pooling"))?
            .to_vec2::<f32>()
            .map_err(model_error("reading vectors"))
    }
}

impl Embedder {
    /// The sentence vector of each token id alone (for distilling the static table).
    pub(super) fn token_vectors(&self, ids: &[u32]) -> Result<Vec<Vec<f32>>, SinkError> {
        match &self.inner {
            Inner::Model(model) => model.token_vectors(ids),
            Inner::Static(_) => Err(SinkError::Model(
                "a static table cannot be distilled from another static table".into(),
            )),
        }
    }

    /// The tokenizer of the model (without padding or truncation).
    pub(super) fn tokenizer(&self) -> Option<Tokenizer> {
        match &self.inner {
            Inner::Model(model) => {
                let mut tokenizer = model.tokenizer.clone();
                tokenizer.with_padding(None);
                tokenizer.with_truncation(None).ok()?;
                Some(tokenizer)
            }
            Inner::Static(_) => None,
        }
    }
}

/// Mean of the hidden states over real (unmasked) tokens, then L2 normalisation.
fn mean_pool(hidden: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
    let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
    let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
    let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?;
    let mean = summed.broadcast_div(&counts)?;
    let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
    mean.broadcast_div(&norms)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    /// Needs the model files (`deploy/local/services.sh model`; the test script fetches them).
    #[test]
    fn paraphrases_are_close_and_unrelated_sentences_are_not() {
        let embedder = Embedder::load(&EmbedConfig::default())
            .expect("model files (deploy/local/services.sh model)");
        let texts = [
            "A cat is sitting on the mat.",
            "There is a cat on the rug.",
            "Quarterly revenue grew by twelve percent.",
        ];
        let vectors = embedder.embed(&texts).unwrap();
        assert_eq!(vectors.len(), 3);
        assert!(vectors.iter().all(|v| v.len() == DIMENSIONS));
        for v in &vectors {
            assert!(
                (cosine(v, v) - 1.0).abs() < 1e-4,
                "vectors are L2-normalised"
            );
        }
        let (close, far) = (
            cosine(&vectors[0], &vectors[1]),
            cosine(&vectors[0], &vectors[2]),
        );
        eprintln!("paraphrase cosine {close}, unrelated cosine {far}");
        assert!(
            close > 0.5 && far < 0.2,
            "paraphrase {close}, unrelated {far}"
        );
        // Padding must not change a text's vector: alone and in a batch with a longer text.
        let alone = embedder.embed(&[texts[1]]).unwrap();
        assert!(cosine(&alone[0], &vectors[1]) > 0.9999);
    }

    /// Hostile and broken texts (control characters, NUL, noncharacters, special-token names,
    /// 10,000 combining marks, a 200 KB line, Cypher and SQL): each gives a finite unit vector,
    /// and a plain sentence embedded in their batch keeps the vector it has alone.
    #[test]
    fn hostile_texts_give_finite_unit_vectors_and_leave_their_neighbours_alone() {
        let hostile = crate::embed::hostile_texts();
        let plain = "The board approved the budget for the Atlas launch.";
        let mut texts: Vec<&str> = hostile.iter().map(String::as_str).collect();
        texts.push(plain);
        let embedder = Embedder::load(&EmbedConfig {
            batch_size: texts.len(),
            ..EmbedConfig::default()
        })
        .expect("model files (deploy/local/services.sh model)");
        let vectors = embedder.embed(&texts).expect("hostile texts embed");
        assert_eq!(vectors.len(), texts.len());
        for (text, v) in texts.iter().zip(&vectors) {
            let shown: String = text.chars().take(40).collect();
            assert_eq!(v.len(), DIMENSIONS, "{shown:?}");
            assert!(v.iter().all(|x| x.is_finite()), "{shown:?}: not finite");
            assert!((cosine(v, v) - 1.0).abs() < 1e-4, "{shown:?}: not unit");
        }
        let alone = embedder.embed(&[plain]).unwrap();
        let beside = cosine(&alone[0], vectors.last().unwrap());
        assert!(beside > 0.9999, "the plain sentence moved: {beside}");
        // Text past the 256-token window does not count: the long line and its first part agree.
        let long = "' OR 1=1 //".repeat(600);
        let short = "' OR 1=1 //".repeat(60);
        let pair = embedder.embed(&[long.as_str(), short.as_str()]).unwrap();
        assert!(cosine(&pair[0], &pair[1]) > 0.99);
    }

    /// Agreement with sentence-transformers: `tests/fixtures/minilm_reference.json` holds vectors
    /// of the same model files computed by `eval/embedder/reference.py` (a NumPy implementation of
    /// what sentence-transformers runs; it reproduces the cosines its documentation publishes) for
    /// short, non-ASCII, question, list-item, code/URL and a 322-word-piece text (truncated at
    /// 256). Embedded here in one batch, so padding is exercised too.
    #[test]
    fn vectors_match_the_sentence_transformers_reference() {
        let reference: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/minilm_reference.json"))
                .unwrap();
        let sentences: Vec<&str> = reference["sentences"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        let expected: Vec<Vec<f32>> = reference["vectors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                v.as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap() as f32)
                    .collect()
            })
            .collect();
        assert_eq!(sentences.len(), expected.len());
        let embedder = Embedder::load(&EmbedConfig {
            batch_size: sentences.len(),
            ..EmbedConfig::default()
        })
        .expect("model files (deploy/local/services.sh model)");
        let vectors = embedder.embed(&sentences).unwrap();
        let cosines: Vec<f32> = vectors
            .iter()
            .zip(&expected)
            .map(|(v, e)| {
                assert_eq!(v.len(), e.len());
                cosine(v, e) / cosine(e, e).sqrt()
            })
            .collect();
        let min = cosines.iter().copied().fold(f32::INFINITY, f32::min);
        let mean = cosines.iter().sum::<f32>() / cosines.len() as f32;
        let max_diff = vectors
            .iter()
            .flatten()
            .zip(expected.iter().flatten())
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        eprintln!(
            "cosine with the reference: min {min:.6}, mean {mean:.6}, each {cosines:?}; \
             largest component difference {max_diff:.2e}"
        );
        for (sentence, c) in sentences.iter().zip(&cosines) {
            assert!(*c >= 0.99, "cosine {c} for {sentence:?}");
        }
    }
}
