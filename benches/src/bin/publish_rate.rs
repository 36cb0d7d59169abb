//! Load run: events/s that the documents connector publishes (scan + Avro encoding + the
//! idempotent producer, i.e. `epigraph ingest docs`) next to a raw rdkafka `FutureProducer`
//! sending payloads of the same sizes, in the same run, against the real broker.
//!
//! `cargo run --release -p epigraph-benches --bin publish-rate -- --events 20000 --bytes 1024`
//! (or with `--workspace` builds: `target/debug/publish-rate`). Topics use the prefix
//! `bench-<pid>` so no deployment sees them; they are left on the broker (delete them with your
//! Kafka tooling).

use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Parser;
use epigraph_connectors::docs::{DocsConfig, Manifest, scan_folder};
use epigraph_connectors::kafka::{EventProducer, KafkaConfig, ensure_topics};
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use rdkafka::ClientConfig;
use rdkafka::producer::{FutureProducer, FutureRecord};

/// Options of the load run.
#[derive(Debug, Parser)]
struct Options {
    /// Documents to generate and publish.
    #[arg(long, default_value_t = 20_000)]
    events: usize,
    /// Body size of each document in bytes.
    #[arg(long, default_value_t = 1024)]
    bytes: usize,
    /// Kafka bootstrap servers.
    #[arg(long, default_value = "127.0.0.1:9092")]
    bootstrap: String,
}

#[tokio::main]
async fn main() -> Result<()> {
    let options = Options::parse();
    let kafka = KafkaConfig {
        bootstrap: options.bootstrap.clone(),
        topic_prefix: format!("bench-{}", std::process::id()),
        ..KafkaConfig::default()
    };
    ensure_topics(&kafka).await?;

    let dir = tempfile_dir()?;
    for i in 0..options.events {
        let body = epigraph_benches::synthetic_body(i as u64, options.bytes);
        std::fs::write(
            dir.join(format!("doc-{i:07}.md")),
            format!("# Document {i}\n\n{body}"),
        )?;
    }

    let started = Instant::now();
    let scan = scan_folder(
        &dir,
        "bench",
        &DocsConfig::default(),
        &Manifest::default(),
        1024,
    )?;
    let payload_sizes: Vec<usize> = scan
        .events
        .iter()
        .map(|e| epigraph_schemas::encode_event(e).map(|p| p.len()))
        .collect::<Result<_, _>>()?;
    let scan_secs = started.elapsed().as_secs_f64();
    let producer = EventProducer::new(&kafka)?;
    let report = producer.publish(scan.events, |_| {}).await?;
    let connector_secs = started.elapsed().as_secs_f64();

    let raw = raw_rate(&kafka, &payload_sizes).await?;
    let connector_rate = report.published as f64 / connector_secs;
    let result = serde_json::json!({
        "events": report.published,
        "body_bytes": options.bytes,
        "mean_payload_bytes": payload_sizes.iter().sum::<usize>() / payload_sizes.len().max(1),
        "docs_connector_events_per_s": connector_rate.round(),
        "of_which_scan_s": (scan_secs * 1000.0).round() / 1000.0,
        "of_which_encode_and_publish_s": ((connector_secs - scan_secs) * 1000.0).round() / 1000.0,
        "raw_rdkafka_events_per_s": raw.round(),
        "ratio_connector_to_raw": (connector_rate / raw * 1000.0).round() / 1000.0,
    });
    println!("{result}");
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

/// Events/s of a bare `FutureProducer` (same settings as ours) sending zero-filled payloads of
/// the given sizes to a bench topic.
async fn raw_rate(kafka: &KafkaConfig, sizes: &[usize]) -> Result<f64> {
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", &kafka.bootstrap)
        .set("enable.idempotence", "true")
        .set("compression.type", &kafka.compression)
        .set("linger.ms", kafka.linger_ms.to_string())
        .set("queue.buffering.max.messages", "200000")
        .create()?;
    let topic = format!("{}.raw", kafka.topic_prefix);
    let payloads: Vec<(String, Vec<u8>)> = sizes
        .iter()
        .enumerate()
        .map(|(i, n)| (format!("bench/raw-{i}"), vec![0u8; *n]))
        .collect();
    let started = Instant::now();
    let mut in_flight = FuturesUnordered::new();
    for (key, payload) in &payloads {
        in_flight.push(producer.send(
            FutureRecord::to(&topic).key(key).payload(payload),
            Duration::from_secs(30),
        ));
        if in_flight.len() >= 10_000 {
            in_flight
                .next()
                .await
                .expect("in flight")
                .map_err(|(e, _)| e)?;
        }
    }
    while let Some(result) = in_flight.next().await {
        result.map_err(|(e, _)| e)?;
    }
    Ok(payloads.len() as f64 / started.elapsed().as_secs_f64())
}

fn tempfile_dir() -> Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("epigraph-publish-rate-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
