//! `epigraph gen <dir> --seed S --scale N`: a synthetic, labelled organisation (see the
//! `epigraph-gen` crate) written as `events.jsonl`, `labels/*.jsonl` and `manifest.json`.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use epigraph_gen::{GenConfig, write_corpus};

use crate::publish::progress_bar;

/// Generate `scale` events with `seed` into `dir` and print a JSON summary.
pub fn generate(dir: &Path, seed: u64, scale: u64) -> Result<()> {
    let config = GenConfig {
        seed,
        events: scale,
        ..GenConfig::default()
    };
    let bar = progress_bar(scale, "generating");
    let started = Instant::now();
    let manifest = write_corpus(dir, &config, |n| bar.set_position(n))
        .with_context(|| format!("generating into {}", dir.display()))?;
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    let summary = serde_json::json!({
        "dir": dir.display().to_string(),
        "seed": seed,
        "scale": scale,
        "events": manifest.events,
        "events_bytes": manifest.events_bytes,
        "seconds": (seconds * 1000.0).round() / 1000.0,
        "events_per_second": (manifest.events as f64 / seconds.max(1e-9)).round(),
        "labels": manifest.labels,
    });
    println!("{summary}");
    Ok(())
}
