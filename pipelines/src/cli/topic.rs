//! `epigraph ingest topic <name> [--follow]`: follow a topic another system produces (Kafka
//! Connect, Debezium), map its records by `[[sources.topic]]`, publish the events, and commit the
//! source topic's offsets once Kafka acknowledged what they produced.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use epigraph_schemas::Op;
use epigraph_sources::kafka::{
    DeadLetter, EventConsumer, EventProducer, KafkaConfig, Polled, RawMessage, RegistryCodec,
    ensure_topics,
};
use epigraph_sources::topic::{
    BadRecord, Format, Record, TopicSource, avro_to_json, decode_json, map_record, wire_frame,
};

use super::follower_metrics::FollowerMetrics;
use crate::config::EpigraphConfig;

/// Records published per batch (one commit of the source offsets per batch).
const BATCH: usize = 500;
/// Without `--follow`: stop after this long with nothing new (the topic's end was not reached
/// because its last records were removed by retention or compaction).
const IDLE_END: Duration = Duration::from_secs(10);

/// Totals of one run.
#[derive(Debug, Default)]
struct Totals {
    read: usize,
    published: usize,
    tombstoned: usize,
    skipped: usize,
    dead_lettered: usize,
}

/// Follow the `[[sources.topic]]` entry called `name`: to the topic's end as of the start, or
/// (`follow`) until Ctrl-C.
pub async fn follow_topic(
    config: &EpigraphConfig,
    name: &str,
    follow: bool,
    metrics_listen: Option<&str>,
) -> Result<()> {
    let source = config
        .sources
        .topic
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| {
            let known: Vec<&str> = config
                .sources
                .topic
                .iter()
                .map(|s| s.name.as_str())
                .collect();
            anyhow!("no [[sources.topic]] is named {name:?} (configured: {known:?})")
        })?;
    source.check()?;
    ensure_topics(&config.kafka)
        .await
        .context("creating topics (is Kafka up? deploy/local/services.sh up)")?;
    let registry = RegistryCodec::from_config(&config.kafka)?;
    if source.format == Format::Avro && registry.is_none() {
        bail!(
            "[[sources.topic]] {name:?} reads Avro, which needs [kafka.schema_registry] url for the writer schemas"
        );
    }
    let group = KafkaConfig {
        group_id: format!("{}.topic.{name}", config.kafka.group_id),
        ..config.kafka.clone()
    };
    let consumer = EventConsumer::from_committed(&group, std::slice::from_ref(&source.topic))?;
    if consumer.partitions().is_empty() {
        bail!("the topic {:?} does not exist (yet)", source.topic);
    }
    let producer = EventProducer::new(&config.kafka)?;
    let metrics = Arc::new(FollowerMetrics::new(
        "topic",
        name,
        &source.tenant,
        follow,
        config.sources.report_every(),
    ));
    if let Some(listen) = metrics_listen {
        super::follower_metrics::serve(listen, metrics.clone()).await?;
    }
    let reporter = metrics.report_to(&config.kafka)?;
    let result = read_until_stopped(
        config,
        source,
        registry.as_deref(),
        &consumer,
        &producer,
        follow,
        &metrics,
    )
    .await;
    reporter.stop(result.as_ref().err()).await;
    result
}

/// Read, map and publish batches to the topic's end as of the start, or (`follow`) until
/// Ctrl-C; the source offsets of each batch are committed once its events are acknowledged.
async fn read_until_stopped(
    config: &EpigraphConfig,
    source: &TopicSource,
    registry: Option<&RegistryCodec>,
    consumer: &EventConsumer,
    producer: &EventProducer,
    follow: bool,
    metrics: &FollowerMetrics,
) -> Result<()> {
    let end = consumer.high_watermarks()?;
    let mut next = consumer.committed()?;
    // Kafka answered: the follower is up before its first record.
    metrics.success(0, 0, 0);
    let mut totals = Totals::default();
    let mut last_message = Instant::now();
    loop {
        let reached = end
            .iter()
            .all(|(partition, mark)| *mark == 0 || next.get(partition).is_some_and(|n| n >= mark));
        // Waiting for the group's coordinator (a broker that has just started) is not the end.
        if consumer.waiting_for_coordinator() {
            last_message = Instant::now();
        }
        if !follow && (reached || last_message.elapsed() > IDLE_END) {
            break;
        }
        let mut batch: Vec<RawMessage> = Vec::new();
        let polled = tokio::select! {
            polled = consumer.poll(Duration::from_millis(500)) => polled?,
            _ = tokio::signal::ctrl_c() => break,
        };
        if let Polled::Message(message) = polled {
            batch.push(message);
            while batch.len() < BATCH {
                match consumer.poll(Duration::from_millis(50)).await? {
                    Polled::Message(message) => batch.push(message),
                    Polled::Idle => break,
                }
            }
        }
        if batch.is_empty() {
            continue;
        }
        last_message = Instant::now();
        let mut commit = BTreeMap::new();
        for message in &batch {
            commit.insert(
                (message.topic.clone(), message.partition),
                message.offset + 1,
            );
        }
        let before = (totals.published, totals.tombstoned, totals.dead_lettered);
        publish_batch(config, source, registry, producer, batch, &mut totals).await?;
        consumer.commit(&commit)?;
        next.extend(commit);
        metrics.success(
            totals.published - before.0,
            totals.tombstoned - before.1,
            totals.dead_lettered - before.2,
        );
        if follow && before != (totals.published, totals.tombstoned, totals.dead_lettered) {
            print_summary(source, &totals);
        }
    }
    if !follow {
        print_summary(source, &totals);
    }
    Ok(())
}

/// Map, publish and flush one batch: dead letters first, then the events.
async fn publish_batch(
    config: &EpigraphConfig,
    source: &TopicSource,
    registry: Option<&RegistryCodec>,
    producer: &EventProducer,
    batch: Vec<RawMessage>,
    totals: &mut Totals,
) -> Result<()> {
    let now = epigraph_schemas::now_millis();
    let mut events = Vec::new();
    let mut letters = Vec::new();
    for message in &batch {
        totals.read += 1;
        let value = match message.payload.as_deref() {
            None => Ok(None),
            Some(bytes) => decode(source, registry, bytes).await?.map(Some),
        };
        let mapped = value.and_then(|value| {
            map_record(
                source,
                &Record {
                    key: message.key.as_deref(),
                    value,
                    timestamp: message.timestamp,
                },
                now,
            )
        });
        match mapped {
            Ok(Some(event)) => events.push(event),
            Ok(None) => totals.skipped += 1,
            Err(reason) => letters.push(DeadLetter::new(
                &format!("{reason} ([[sources.topic]] {:?})", source.name),
                "topic",
                Some(&source.tenant),
                &message.location(),
                message.payload.as_deref().unwrap_or_default(),
                config.kafka.dead_letter_max_bytes,
            )),
        }
    }
    for letter in &letters {
        producer.dead_letter(letter).await?;
    }
    totals.dead_lettered += letters.len();
    let tombstones = events.iter().filter(|e| e.op == Op::Delete).count();
    let report = producer.publish(events, |_| {}).await?;
    producer.flush()?;
    totals.tombstoned += tombstones;
    totals.published += report.published.saturating_sub(tombstones);
    totals.dead_lettered += report.dead_lettered;
    Ok(())
}

/// A value's JSON: `Ok(Err(reason))` when the record is at fault (a dead letter), `Err` when the
/// registry is (stop without committing, so nothing is lost).
async fn decode(
    source: &TopicSource,
    registry: Option<&RegistryCodec>,
    bytes: &[u8],
) -> Result<std::result::Result<serde_json::Value, BadRecord>> {
    match source.format {
        Format::Json => Ok(decode_json(bytes)),
        Format::Avro => {
            let registry = registry.expect("checked at the start");
            let (id, datum) = match wire_frame(bytes) {
                Ok(frame) => frame,
                Err(reason) => return Ok(Err(reason)),
            };
            match registry.writer(id).await {
                Ok(schema) => Ok(avro_to_json(&schema, datum)),
                Err(error) if error.is_unavailable() => {
                    Err(error).context("reading a writer schema from the registry")
                }
                Err(error) => Ok(Err(BadRecord(format!("schema id {id}: {error}")))),
            }
        }
    }
}

fn print_summary(source: &TopicSource, totals: &Totals) {
    let summary = serde_json::json!({
        "source": "topic",
        "name": source.name,
        "topic": source.topic,
        "tenant": source.tenant,
        "read": totals.read,
        "published": totals.published,
        "tombstoned": totals.tombstoned,
        "skipped": totals.skipped,
        "dead_lettered": totals.dead_lettered,
    });
    println!("{summary}");
}
