//! Load run: sentences/s of the local embedder (all-MiniLM-L6-v2 in candle, `Embedder::embed`).
//!
//! `target/debug/embed-rate --sentences 500 --batch 32 [--kind static]` (build with
//! `cargo build --workspace --bins`; needs the model files, `deploy/local/services.sh model`).
//! The sentences are the memory units (sentences and list items) of a generated organisation
//! (`epigraph gen`, seed 7), distinct, in generation order. Loading the model and one warm-up
//! batch are not timed; the clock covers tokenising, the forward passes and pooling of all
//! sentences, `--batch` texts per forward pass. Prints one JSON object.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Result, bail};
use clap::Parser;
use epigraph_sinks::embed::{EmbedConfig, EmbedKind, Embedder};

/// Options of the load run.
#[derive(Debug, Parser)]
struct Options {
    /// Sentences to embed.
    #[arg(long, default_value_t = 500)]
    sentences: usize,
    /// Texts per forward pass.
    #[arg(long, default_value_t = 32)]
    batch: usize,
    /// Model folder (default: `$EPIGRAPH_HOME/models/all-MiniLM-L6-v2`).
    #[arg(long)]
    model_dir: Option<PathBuf>,
    /// `model` (the transformer) or `static` (the distilled token table, the bulk-backfill
    /// path; distilled on first use).
    #[arg(long, default_value = "model")]
    kind: String,
}

fn main() -> Result<()> {
    let options = Options::parse();
    let sentences = generated_sentences(options.sentences);
    if sentences.len() < options.sentences {
        bail!(
            "the generator gave only {} distinct sentences",
            sentences.len()
        );
    }
    let mut config = EmbedConfig {
        batch_size: options.batch.max(1),
        ..EmbedConfig::default()
    };
    if let Some(dir) = options.model_dir {
        config.dir = dir;
    }
    config.kind = match options.kind.as_str() {
        "model" => EmbedKind::Model,
        "static" => EmbedKind::Static,
        other => bail!("--kind {other:?} is neither model nor static"),
    };
    let loading = Instant::now();
    let embedder = Embedder::load(&config)?;
    let load_seconds = loading.elapsed().as_secs_f64();
    let refs: Vec<&str> = sentences.iter().map(String::as_str).collect();
    embedder.embed(&refs[..config.batch_size.min(refs.len())])?;

    let started = Instant::now();
    let vectors = embedder.embed(&refs)?;
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(vectors.len(), refs.len());

    let chars: usize = refs.iter().map(|s| s.chars().count()).sum();
    let result = serde_json::json!({
        "sentences": refs.len(),
        "batch": config.batch_size,
        "kind": options.kind,
        "seconds": round3(seconds),
        "sentences_per_s": round3(refs.len() as f64 / seconds),
        "profile": if cfg!(debug_assertions) { "dev" } else { "release" },
        "mean_chars": round3(chars as f64 / refs.len().max(1) as f64),
        "load_seconds": round3(load_seconds),
    });
    println!("{result}");
    Ok(())
}

/// The first `n` distinct memory-unit texts of `epigraph gen --seed 7`.
fn generated_sentences(n: usize) -> Vec<String> {
    let generator = epigraph_gen::Generator::new(epigraph_gen::GenConfig {
        seed: 7,
        events: (n as u64).max(100) * 4,
        delete_share: 0.0,
        edit_share: 0.0,
        ..Default::default()
    });
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(n);
    for generated in generator {
        for unit in generated.labels.units {
            if out.len() < n && seen.insert(unit.text.clone()) {
                out.push(unit.text);
            }
        }
        if out.len() >= n {
            break;
        }
    }
    out
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
