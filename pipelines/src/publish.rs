//! Publishing a source's scan to Kafka with a progress bar: shared by `epigraph ingest` and the
//! evaluations that publish their corpora.

use anyhow::{Context, Result};
use epigraph_sources::Scan;
use epigraph_sources::kafka::{EventProducer, PublishReport, ensure_topics};
use indicatif::{ProgressBar, ProgressStyle};

use crate::config::EpigraphConfig;

/// Publish dead letters, then events (with a progress bar), and wait for every acknowledgement.
pub async fn publish(config: &EpigraphConfig, scan: Scan) -> Result<PublishReport> {
    ensure_topics(&config.kafka)
        .await
        .context("creating topics (is Kafka up? deploy/local/services.sh up)")?;
    let producer = EventProducer::new(&config.kafka)?;
    for letter in &scan.dead_letters {
        producer.dead_letter(letter).await?;
    }
    let bar = progress_bar(scan.events.len() as u64, "publishing");
    let report = producer
        .publish(scan.events, |n| bar.set_position(n as u64))
        .await?;
    bar.finish_and_clear();
    producer.flush()?;
    Ok(report)
}

/// A progress bar on stderr (indicatif hides it when stderr is not a terminal).
pub fn progress_bar(len: u64, message: &'static str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} ({per_sec}, eta {eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(message);
    bar
}
