//! The raw rates of the pipeline's parts, measured in the same run as the end-to-end rate:
//! Kafka consume without decoding, Neo4j writes (plain `UNWIND … MERGE` and the sink's own),
//! LanceDB adds (plain and the sink's `merge_insert`) and the embedder.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use epigraph::config::EpigraphConfig;
use epigraph_sinks::embed::Embedder;
use epigraph_sinks::lance::{LanceConfig, LanceSink, MemoryRow};
use epigraph_sinks::neo4j::{GraphBatch, Neo4jSink, NodeWrite, PropValue};
use epigraph_sources::kafka::KafkaConfig;
use lancedb::arrow::arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray, new_null_array};
use neo4rs::{BoltType, query};
use rdkafka::ClientConfig;
use rdkafka::Message;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use serde_json::{Value, json};

use super::*;

/// (a) Messages/s and MB/s of a bare rdkafka consumer reading `topics` from the beginning to
/// their high watermarks, touching only the payload length.
pub(crate) fn kafka_consume_rate(kafka: &KafkaConfig, topics: &[String]) -> Result<Value> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &kafka.bootstrap)
        .set("group.id", format!("{}-raw-consume", kafka.topic_prefix))
        .set("enable.auto.commit", "false")
        .set("enable.partition.eof", "false")
        .set("auto.offset.reset", "earliest")
        .create()?;
    let mut assignment = TopicPartitionList::new();
    let mut expected = 0i64;
    for topic in topics {
        let metadata = consumer.fetch_metadata(Some(topic), Duration::from_secs(10))?;
        for meta in metadata.topics() {
            for partition in meta.partitions() {
                let (low, high) =
                    consumer.fetch_watermarks(topic, partition.id(), Duration::from_secs(10))?;
                expected += high - low;
                assignment.add_partition_offset(topic, partition.id(), Offset::Beginning)?;
            }
        }
    }
    let assigned = Instant::now();
    consumer.assign(&assignment)?;
    let (mut messages, mut bytes) = (0i64, 0usize);
    let mut first: Option<Instant> = None;
    let deadline = Instant::now() + Duration::from_secs(120);
    while messages < expected && Instant::now() < deadline {
        if let Some(message) = consumer.poll(Duration::from_millis(500)) {
            let message = message?;
            first.get_or_insert_with(Instant::now);
            messages += 1;
            bytes +=
                message.payload().map_or(0, <[u8]>::len) + message.key().map_or(0, <[u8]>::len);
        }
    }
    let seconds = first.map_or(0.0, |t| t.elapsed().as_secs_f64());
    let from_assign = assigned.elapsed().as_secs_f64();
    Ok(json!({
        "messages": messages,
        "bytes": bytes,
        "seconds": round(seconds, 3),
        "seconds_from_assign": round(from_assign, 3),
        "messages_per_s_from_assign": round(messages as f64 / from_assign.max(1e-9), 0),
        "mb_per_s_from_assign": round(bytes as f64 / 1e6 / from_assign.max(1e-9), 2),
        "messages_per_s_from_first_message": round(messages as f64 / seconds.max(1e-9), 0),
        "note": "BaseConsumer from the beginning to the high watermarks, payload and key length only; from_assign includes the first fetch (librdkafka prefetches, so from_first_message is mostly an in-memory drain)",
    }))
}

/// Memory-like properties of synthetic row `i`.
pub(crate) fn synthetic_props(i: usize, tenant: &str, view: &str) -> BTreeMap<String, PropValue> {
    let text = epigraph_benches::synthetic_body(i as u64, 60);
    let mut props = BTreeMap::new();
    props.insert("tenant".into(), PropValue::Text(tenant.into()));
    props.insert("type".into(), PropValue::Text("DECISION".into()));
    props.insert("text".into(), PropValue::Text(text));
    props.insert("title".into(), PropValue::Text(format!("title {}", i % 97)));
    props.insert(
        "source_id".into(),
        PropValue::Text(format!("src/{}", i / 4)),
    );
    props.insert("source_version".into(), PropValue::Text("v1".into()));
    props.insert("span_start".into(), PropValue::Int(0));
    props.insert("span_end".into(), PropValue::Int(60));
    props.insert(
        "t_valid".into(),
        PropValue::Int(1_767_600_000_000 + i as i64),
    );
    props.insert("standing".into(), PropValue::Text("current".into()));
    props.insert("confidence".into(), PropValue::Int(800));
    props.insert("view".into(), PropValue::Text(view.into()));
    props
}

/// (b) Rows/s of the raw UNWIND … MERGE … SET n += row.props statement, batched like the sink,
/// and of `Neo4jSink::apply` on the same number of rows (other ids).
pub(crate) async fn neo4j_rates(config: &EpigraphConfig, rows: usize, view: &str) -> Result<Value> {
    let tenant = format!("{view}-synthetic");
    let sink = Neo4jSink::connect(&config.neo4j).await?.with_view(view);
    let graph = sink.graph().clone();
    let batch_rows = config.neo4j.batch_rows.max(1);
    let per_txn = (config.neo4j.transaction_rows / batch_rows).max(1);
    let ids: Vec<String> = (0..rows).map(|i| format!("{view}/raw/{i}")).collect();
    let started = Instant::now();
    for group in ids.chunks(batch_rows * per_txn) {
        let mut txn = graph.start_txn().await?;
        for chunk in group.chunks(batch_rows) {
            let offset = chunk
                .first()
                .and_then(|id| id.rsplit('/').next())
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap_or(0);
            let rows: Vec<BoltType> = chunk
                .iter()
                .enumerate()
                .map(|(j, id)| {
                    let props: HashMap<String, BoltType> =
                        synthetic_props(offset + j, &tenant, view)
                            .iter()
                            .map(|(k, v)| (k.clone(), BoltType::from(v)))
                            .collect();
                    let mut row: HashMap<&str, BoltType> = HashMap::new();
                    row.insert("id", id.clone().into());
                    row.insert("props", props.into());
                    row.into()
                })
                .collect();
            txn.run(
                query("UNWIND $rows AS row MERGE (n:Node {id: row.id}) SET n += row.props")
                    .param("rows", rows),
            )
            .await?;
        }
        txn.commit().await?;
    }
    let raw_seconds = started.elapsed().as_secs_f64();

    let writes: Vec<NodeWrite> = (0..rows)
        .map(|i| NodeWrite {
            id: format!("{view}/sink/{i}"),
            labels: vec!["Memory".into(), "Decision".into()],
            props: synthetic_props(i, &tenant, view),
            content_hash: format!("h{i}"),
        })
        .collect();
    let started = Instant::now();
    sink.apply(&GraphBatch {
        upsert_nodes: writes,
        ..GraphBatch::default()
    })
    .await?;
    let sink_seconds = started.elapsed().as_secs_f64();
    let deleted = sink.clear(None).await?;
    Ok(json!({
        "rows": rows,
        "statement_rows": batch_rows,
        "transaction_rows": batch_rows * per_txn,
        "raw_unwind_merge_rows_per_s": round(rows as f64 / raw_seconds, 0),
        "raw_seconds": round(raw_seconds, 3),
        "sink_apply_rows_per_s": round(rows as f64 / sink_seconds, 0),
        "sink_apply_seconds": round(sink_seconds, 3),
        "nodes_deleted_after": deleted,
        "note": "12 memory-like properties per row; fresh ids (creates); sink_apply is Neo4jSink::apply, which also removes stale labels and sets Memory:Decision",
    }))
}

/// (c) Rows/s of `Table::add` of memory-schema rows without vectors, and of `LanceSink::apply`
/// (merge_insert by id) on the same number of rows, each in a fresh folder.
pub(crate) async fn lance_rates(
    dir: &Path,
    rows: usize,
    batch: usize,
    view: &str,
) -> Result<Value> {
    let tenant = format!("{view}-synthetic");
    let memory_rows: Vec<MemoryRow> = (0..rows)
        .map(|i| MemoryRow {
            id: format!("{view}/{i}"),
            tenant: tenant.clone(),
            memory_type: "DECISION".into(),
            title: Some(format!("title {}", i % 97)),
            text: epigraph_benches::synthetic_body(i as u64, 60),
            source_id: format!("src/{}", i / 4),
            source_version: "v1".into(),
            span_start: 0,
            span_end: 60,
            t_valid: Some(1_767_600_000_000 + i as i64),
            t_invalid: None,
            content_hash: format!("h{i}"),
        })
        .collect();
    // Raw add: the table the sink creates, its schema, arrow batches built here.
    let raw_dir = dir.join("lance-raw");
    let config = LanceConfig {
        dir: raw_dir.display().to_string(),
        ..LanceConfig::default()
    };
    drop(LanceSink::open(&config, None).await?);
    let db = lancedb::connect(&config.dir).execute().await?;
    let table = db.open_table(&config.memory_table).execute().await?;
    let schema = table.schema().await?;
    let mut batches = Vec::new();
    for chunk in memory_rows.chunks(batch.max(1)) {
        let n = chunk.len();
        let text = |f: &dyn Fn(&MemoryRow) -> String| -> ArrayRef {
            Arc::new(StringArray::from(chunk.iter().map(f).collect::<Vec<_>>()))
        };
        let mut columns: Vec<ArrayRef> = Vec::new();
        for field in schema.fields() {
            let column: ArrayRef = match field.name().as_str() {
                "id" => text(&|r| r.id.clone()),
                "tenant" => text(&|r| r.tenant.clone()),
                "memory_type" => text(&|r| r.memory_type.clone()),
                "title" => text(&|r| r.title.clone().unwrap_or_default()),
                "text" => text(&|r| r.text.clone()),
                "source_id" => text(&|r| r.source_id.clone()),
                "source_version" => text(&|r| r.source_version.clone()),
                "content_hash" => text(&|r| r.content_hash.clone()),
                "view" => text(&|_| view.to_string()),
                "text_hash" => text(&|r| format!("t{}", r.id)),
                "span_start" | "span_end" | "t_valid" | "written_at" => {
                    Arc::new(Int64Array::from(vec![1_767_600_000_000i64; n]))
                }
                _ => new_null_array(field.data_type(), n),
            };
            columns.push(column);
        }
        batches.push(RecordBatch::try_new(schema.clone(), columns)?);
    }
    let started = Instant::now();
    for b in batches {
        table.add(b).execute().await?;
    }
    let add_seconds = started.elapsed().as_secs_f64();

    // The sink's path: merge_insert by id, one call per batch (an epoch's rows).
    let config = LanceConfig {
        dir: dir.join("lance-sink").display().to_string(),
        ..LanceConfig::default()
    };
    let sink = LanceSink::open(&config, None).await?.with_view(view);
    let started = Instant::now();
    for chunk in memory_rows.chunks(batch.max(1)) {
        sink.apply(chunk, &[]).await?;
    }
    let merge_seconds = started.elapsed().as_secs_f64();
    Ok(json!({
        "rows": rows,
        "rows_per_write": batch,
        "raw_add_rows_per_s": round(rows as f64 / add_seconds, 0),
        "raw_add_seconds": round(add_seconds, 3),
        "sink_merge_insert_rows_per_s": round(rows as f64 / merge_seconds, 0),
        "sink_merge_insert_seconds": round(merge_seconds, 3),
        "note": "memory schema, null vectors, ~60-character texts; a fresh folder each; no index",
    }))
}

/// (d) Sentences/s of the embedder on the first distinct sentences of the corpus.
pub(crate) fn embed_rate(config: &EpigraphConfig, corpus: &Path, n: usize) -> Result<Value> {
    let text = std::fs::read_to_string(corpus.join("events.jsonl"))?;
    let mut seen = std::collections::HashSet::new();
    let mut sentences = Vec::new();
    'lines: for line in text.lines() {
        let event: Value = serde_json::from_str(line)?;
        for s in event["body"]
            .as_str()
            .unwrap_or("")
            .split(['.', '\n', '?', '!'])
        {
            let s = s.trim().trim_start_matches(['#', '-', ' ']);
            if s.len() >= 12 && seen.insert(s.to_string()) {
                sentences.push(s.to_string());
                if sentences.len() >= n {
                    break 'lines;
                }
            }
        }
    }
    let embedder = Embedder::load(&config.model)?;
    let refs: Vec<&str> = sentences.iter().map(String::as_str).collect();
    let batch = config.model.batch_size.max(1);
    embedder.embed(&refs[..batch.min(refs.len())])?;
    let started = Instant::now();
    for chunk in refs.chunks(batch) {
        embedder.embed(chunk)?;
    }
    let seconds = started.elapsed().as_secs_f64();
    let mean_chars = refs.iter().map(|s| s.len()).sum::<usize>() as f64 / refs.len().max(1) as f64;
    Ok(json!({
        "sentences": refs.len(),
        "batch": batch,
        "mean_chars": round(mean_chars, 1),
        "sentences_per_s": round(refs.len() as f64 / seconds, 1),
        "seconds": round(seconds, 2),
    }))
}

// ---------------------------------------------------------------- end to end
