//! `pipeline-rate`: the end-to-end rate and freshness of `epigraph run`, and in the same run the
//! raw rates of its parts, so that each stage's share of the limit is visible (issue 7).
//!
//! One run, against the real Kafka and Neo4j, on fresh topic prefixes (`prate-<pid>-…`), a
//! fresh tenant and fresh LanceDB folders under `--out`:
//!
//! 1. **Parts.** (a) an rdkafka consumer reading the published corpus topics from the
//!    beginning without decoding (messages/s, MB/s); (b) Neo4j: `UNWIND $rows AS row MERGE
//!    (n:Node {id: row.id}) SET n += row.props` over synthetic memory-like rows in statements of
//!    `neo4j.batch_rows` and transactions of `neo4j.transaction_rows` (the sink's batching),
//!    and the same rows through `Neo4jSink::apply` (the sink's own statement, which also
//!    replaces stale labels); (c) LanceDB: `Table::add` of rows of the memory schema without
//!    vectors, in batches of `--lance-batch`, and the same rows through `LanceSink::apply`
//!    (`merge_insert` by id, what an epoch does); (d) the embedder (`Embedder::embed`) on
//!    sentences of the corpus.
//! 2. **End to end.** `epigraph gen` writes a corpus; it is published with `epigraph ingest
//!    events` (timed) to one prefix per mode, and `epigraph run --until-idle` consumes it from
//!    the backlog, once with `lancedb.embed = false` and once with the embedder; and once more
//!    without the embedder **live**: the pipeline runs idle and the corpus is published into it.
//!    `/metrics` is scraped every `--scrape-ms`: events/s = events / (all offsets committed −
//!    first event counted); with the embedder also the time until every row and chunk has its
//!    vector. A run longer than `--limit-s` is stopped and reported as timed out.
//! 3. **Freshness.** A live `epigraph run` (embedder on) on a third prefix; `--fresh-events`
//!    chat events with a unique marker are published at `--fresh-rate`/s; a poller asks Neo4j
//!    (the `:Source` node) and LanceDB (a memory row of the source) every `--poll-ms` for the
//!    pending ones. p50/p99 of publish → visible in Neo4j, in LanceDB, in both.
//!
//! The pipelines it starts read the usual `EPIGRAPH_*` environment: `EPIGRAPH_MODEL__KIND=static`
//! runs the embedder runs with the static table of the bulk-backfill path (recorded as
//! `parameters.embedder`), `EPIGRAPH_RUN__WORKERS=2` with two workers.
//!
//! Prints one JSON document. Build with `cargo build --workspace --bins`, then
//! `target/debug/pipeline-rate --scale 5000` (or `--release`: `target/release/pipeline-rate`). Topics are deleted and the Neo4j views cleared at
//! the end unless `--keep`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Parser;
use epigraph::config::EpigraphConfig;
use epigraph_sinks::embed::Embedder;
use epigraph_sinks::lance::{LanceConfig, LanceSink, MemoryRow};
use epigraph_sinks::neo4j::{GraphBatch, Neo4jSink, NodeWrite, PropValue};
use epigraph_sources::kafka::{EventProducer, KafkaConfig, delete_topics, ensure_topics};
use futures::TryStreamExt;
use lancedb::arrow::arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray, new_null_array};
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use neo4rs::{BoltType, query};
use rdkafka::ClientConfig;
use rdkafka::Message;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use serde_json::{Value, json};

#[derive(Debug, Parser)]
#[command(
    about = "End-to-end events/s and freshness of epigraph run, and the raw rates of its parts"
)]
struct Args {
    /// Generated events (`epigraph gen --scale`).
    #[arg(long, default_value_t = 5000)]
    scale: u64,
    /// Generator seed.
    #[arg(long, default_value_t = 11)]
    seed: u64,
    /// Synthetic rows for the Neo4j and LanceDB part rates.
    #[arg(long, default_value_t = 20_000)]
    rows: usize,
    /// Rows per `Table::add` in the LanceDB part rate (an epoch's rows are one write).
    #[arg(long, default_value_t = 1000)]
    lance_batch: usize,
    /// Sentences for the embedder rate (0: skip).
    #[arg(long, default_value_t = 256)]
    embed_sentences: usize,
    /// Skip the end-to-end run with the embedder.
    #[arg(long)]
    skip_embed_run: bool,
    /// Freshness: events to publish into the live pipeline.
    #[arg(long, default_value_t = 600)]
    fresh_events: usize,
    /// Freshness: events published per second.
    #[arg(long, default_value_t = 20.0)]
    fresh_rate: f64,
    /// Freshness: how often the poller asks both stores, in ms.
    #[arg(long, default_value_t = 50)]
    poll_ms: u64,
    /// Longest an end-to-end run may take before it is stopped and reported as timed out, in s.
    #[arg(long, default_value_t = 900)]
    limit_s: u64,
    /// Skip the live end-to-end run (corpus published into a running pipeline, no embedder).
    #[arg(long)]
    skip_live_run: bool,
    /// How often `/metrics` is scraped during the end-to-end runs, in ms.
    #[arg(long, default_value_t = 250)]
    scrape_ms: u64,
    /// First of four metrics ports used by the pipelines this run starts.
    #[arg(long, default_value_t = 19571)]
    metrics_port: u16,
    /// Working folder (corpus, LanceDB folders, state, logs). Default `/tmp/prate-<pid>`.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Keep the topics and the Neo4j views.
    #[arg(long)]
    keep: bool,
}

fn round(x: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (x * f).round() / f
}

fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    Some(round(sorted[i], 1))
}

fn epigraph_binary() -> Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let bin = exe.parent().context("binary folder")?.join("epigraph");
    if !bin.exists() {
        bail!(
            "{} is missing: cargo build --workspace --bins",
            bin.display()
        );
    }
    Ok(bin)
}

/// The environment of one pipeline: its own prefix, LanceDB folder, state folder and metrics port.
#[derive(Clone, Debug)]
struct Setup {
    prefix: String,
    lance_dir: PathBuf,
    state_dir: PathBuf,
    metrics: String,
    embed: bool,
}

impl Setup {
    fn envs(&self) -> Vec<(&'static str, String)> {
        vec![
            ("EPIGRAPH_KAFKA__TOPIC_PREFIX", self.prefix.clone()),
            (
                "EPIGRAPH_LANCEDB__DIR",
                self.lance_dir.display().to_string(),
            ),
            ("EPIGRAPH_STATE_DIR", self.state_dir.display().to_string()),
            ("EPIGRAPH_RUN__METRICS_LISTEN", self.metrics.clone()),
            ("EPIGRAPH_LANCEDB__EMBED", self.embed.to_string()),
            ("RUST_LOG", "warn".to_string()),
        ]
    }

    fn kafka(&self, base: &KafkaConfig) -> KafkaConfig {
        KafkaConfig {
            topic_prefix: self.prefix.clone(),
            ..base.clone()
        }
    }
}

fn run_epigraph(bin: &Path, setup: &Setup, args: &[&str]) -> Result<String> {
    let output = Command::new(bin)
        .args(args)
        .envs(setup.envs())
        .output()
        .with_context(|| format!("running epigraph {args:?}"))?;
    if !output.status.success() {
        bail!(
            "epigraph {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

fn spawn_run(bin: &Path, setup: &Setup, out: &Path, name: &str, args: &[&str]) -> Result<Child> {
    Ok(Command::new(bin)
        .arg("run")
        .args(args)
        .envs(setup.envs())
        .stdout(std::fs::File::create(out.join(format!("{name}.out")))?)
        .stderr(std::fs::File::create(out.join(format!("{name}.err")))?)
        .spawn()?)
}

/// Prometheus text → sums by metric name (labels summed over), plus `Source` elements.
fn parse_metrics(text: &str) -> HashMap<String, f64> {
    let mut values = HashMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let Some((name, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(value) = value.parse::<f64>() else {
            continue;
        };
        if name == "epigraph_graph_elements{kind=\"Source\"}" {
            values.insert("sources".to_string(), value);
        }
        if name.contains('{') {
            values.insert(name.to_string(), value);
        }
        let base = name.split('{').next().unwrap_or(name);
        *values.entry(base.to_string()).or_insert(0.0) += value;
    }
    values
}

async fn scrape(client: &reqwest::Client, listen: &str) -> Option<HashMap<String, f64>> {
    let text = client
        .get(format!("http://{listen}/metrics"))
        .timeout(Duration::from_secs(2))
        .send()
        .await
        .ok()?
        .text()
        .await
        .ok()?;
    Some(parse_metrics(&text))
}

// ---------------------------------------------------------------- parts

/// (a) Messages/s and MB/s of a bare rdkafka consumer reading `topics` from the beginning to
/// their high watermarks, touching only the payload length.
fn kafka_consume_rate(kafka: &KafkaConfig, topics: &[String]) -> Result<Value> {
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
fn synthetic_props(i: usize, tenant: &str, view: &str) -> BTreeMap<String, PropValue> {
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
async fn neo4j_rates(config: &EpigraphConfig, rows: usize, view: &str) -> Result<Value> {
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
async fn lance_rates(dir: &Path, rows: usize, batch: usize, view: &str) -> Result<Value> {
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
fn embed_rate(config: &EpigraphConfig, corpus: &Path, n: usize) -> Result<Value> {
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

/// Publish the corpus to `setup`'s prefix with `epigraph ingest events`, timed.
fn publish(bin: &Path, setup: &Setup, corpus: &Path, tenant: &str) -> Result<Value> {
    let started = Instant::now();
    let out = run_epigraph(
        bin,
        setup,
        &[
            "ingest",
            "events",
            corpus.join("events.jsonl").to_str().context("utf-8")?,
            "--tenant",
            tenant,
        ],
    )?;
    let seconds = started.elapsed().as_secs_f64();
    let summary: Value = out
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    let published = summary["published"].as_f64().unwrap_or(0.0);
    Ok(json!({
        "summary": summary,
        "seconds": round(seconds, 2),
        "events_per_s": round(published / seconds, 0),
    }))
}

/// `epigraph run` on the corpus, with `/metrics` scraped meanwhile: `--until-idle` on a
/// published backlog, or (`live`) a running pipeline the corpus is published into.
#[allow(clippy::too_many_arguments)]
async fn end_to_end(
    bin: &Path,
    setup: &Setup,
    out: &Path,
    name: &str,
    published: f64,
    scrape_every: Duration,
    limit: Duration,
    live: Option<(&Path, &str)>,
    expected_elements: Option<f64>,
) -> Result<Value> {
    let client = reqwest::Client::new();
    let started = Instant::now();
    let args: &[&str] = if live.is_some() {
        &[]
    } else {
        &["--until-idle"]
    };
    let mut child = spawn_run(bin, setup, out, name, args)?;
    // Live: the pipeline is up and idle before the corpus is published into it.
    let mut publisher = None;
    if let Some((corpus, tenant)) = live {
        while scrape(&client, &setup.metrics).await.is_none() {
            if child.try_wait()?.is_some() || started.elapsed() > Duration::from_secs(120) {
                let _ = child.kill();
                bail!("the live pipeline did not come up: see {}", out.display());
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        let (bin, setup, corpus, tenant) = (
            bin.to_path_buf(),
            setup.clone(),
            corpus.to_path_buf(),
            tenant.to_string(),
        );
        publisher = Some(std::thread::spawn(move || {
            publish(&bin, &setup, &corpus, &tenant)
        }));
    }
    let mut timed_out = false;
    let mut first_event: Option<f64> = None;
    let mut all_committed: Option<f64> = None;
    let mut all_vectors: Option<f64> = None;
    let mut metrics_up: Option<f64> = None;
    let mut last: HashMap<String, f64> = HashMap::new();
    let mut max_vector_lag = 0f64;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        let finished = all_committed.is_some() && (!setup.embed || all_vectors.is_some());
        if (live.is_some() && finished) || started.elapsed() > limit {
            timed_out = !finished;
            let _ = child.kill();
            break child.wait()?;
        }
        if let Some(m) = scrape(&client, &setup.metrics).await {
            let t = started.elapsed().as_secs_f64();
            metrics_up.get_or_insert(t);
            let events_in = m.get("epigraph_events_in_total").copied().unwrap_or(0.0);
            if events_in > 0.0 {
                first_event.get_or_insert(t);
            }
            let lag = m.get("epigraph_consumer_lag").copied();
            // Events are counted on receipt and the lag gauge only moves at a commit, so "all
            // committed" also needs every sealed epoch applied (the sink histograms count
            // applies) and, live, the dataflow's element count at its final value (from the
            // backlog run of the same corpus): else a scrape between receipt and the next
            // seal sees the stale lag of the previous commit.
            let epochs = m.get("epigraph_epochs_total").copied().unwrap_or(0.0);
            let applied = m
                .get("epigraph_sink_seconds_count{sink=\"lancedb\"}")
                .copied()
                .unwrap_or(0.0);
            let elements_final = match (live, expected_elements) {
                (Some(_), Some(want)) => m.get("epigraph_graph_elements").copied() == Some(want),
                _ => true,
            };
            if all_committed.is_none()
                && events_in >= published
                && lag == Some(0.0)
                && epochs > 0.0
                && applied >= epochs
                && elements_final
            {
                all_committed = Some(t);
            }
            let pending = m
                .get("epigraph_vector_pending_rows")
                .copied()
                .unwrap_or(0.0);
            max_vector_lag =
                max_vector_lag.max(m.get("epigraph_vector_lag_seconds").copied().unwrap_or(0.0));
            if setup.embed
                && all_committed.is_some()
                && all_vectors.is_none()
                && pending == 0.0
                && m.get("epigraph_vectors_embedded_total")
                    .copied()
                    .unwrap_or(0.0)
                    > 0.0
            {
                all_vectors = Some(t);
            }
            last = m;
        }
        tokio::time::sleep(scrape_every).await;
    };
    let exit = started.elapsed().as_secs_f64();
    let killed = live.is_some() || timed_out;
    if !killed && !status.success() {
        bail!("epigraph run ({name}) failed: see {}", out.display());
    }
    let publish_live = match publisher {
        Some(handle) => handle
            .join()
            .map_err(|_| anyhow::anyhow!("the publisher panicked"))??,
        None => Value::Null,
    };
    // `--until-idle` exits once every row has its vector, possibly between two scrapes.
    let vectors_seen = all_vectors.is_some();
    let all_vectors = if setup.embed && !killed {
        all_vectors.or(Some(exit))
    } else {
        all_vectors
    };
    let report: Value = std::fs::read_to_string(out.join(format!("{name}.out")))?
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    let events = report["messages"].as_f64().unwrap_or(published);
    // The run can exit between two scrapes right after its last commit (no embedder).
    let committed_seen = all_committed.is_some();
    let all_committed = if killed {
        all_committed
    } else {
        all_committed.or(Some(exit))
    };
    let consumed_to_committed = match (first_event, all_committed) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let g = |k: &str| last.get(k).copied().map(|v| round(v, 3));
    Ok(json!({
        "embed": setup.embed,
        "events": events,
        "process_wall_s": round(exit, 2),
        "metrics_up_at_s": metrics_up.map(|t| round(t, 2)),
        "first_event_counted_at_s": first_event.map(|t| round(t, 2)),
        "all_committed_at_s": all_committed.map(|t| round(t, 2)),
        "all_committed_seen_in_a_scrape": committed_seen,
        "all_vectors_at_s": all_vectors.map(|t| round(t, 2)),
        "all_vectors_seen_in_a_scrape": vectors_seen,
        "mode": if live.is_some() { "live: published into the running pipeline, timed from the first event counted" } else { "backlog: published first, then run --until-idle (the restore reads it as one epoch)" },
        "timed_out": timed_out,
        "publish_live": publish_live,
        "vector_pending_rows_last": g("epigraph_vector_pending_rows"),
        "events_per_s_first_event_to_committed": consumed_to_committed.map(|s| round(events / s.max(1e-9), 1)),
        "events_per_s_process_start_to_committed": all_committed.map(|s| round(events / s, 1)),
        "events_per_s_process_start_to_exit": round(events / exit, 1),
        "seconds_first_event_to_all_vectors": match (first_event, all_vectors) {
            (Some(a), Some(b)) => Some(round(b - a, 2)),
            _ => None,
        },
        "max_vector_lag_seconds_seen": round(max_vector_lag, 1),
        "last_scrape": {
            "epochs": g("epigraph_epochs_total"),
            "epoch_seconds_sum": g("epigraph_epoch_seconds_sum"),
            "sink_seconds_sum_both_sinks": g("epigraph_sink_seconds_sum"),
            "embed_batch_seconds_sum": g("epigraph_embed_batch_seconds_sum"),
            "vectors_embedded": g("epigraph_vectors_embedded_total"),
            "vectors_reused": g("epigraph_vectors_reused_total"),
            "sources": g("sources"),
            "graph_elements": g("epigraph_graph_elements"),
        },
        "neo4j_sink_seconds_sum": g("epigraph_sink_seconds_sum{sink=\"neo4j\"}"),
        "lancedb_sink_seconds_sum": g("epigraph_sink_seconds_sum{sink=\"lancedb\"}"),
        "report": report,
    }))
}

// ---------------------------------------------------------------- freshness

struct Pending {
    id: String,
    published: Instant,
    neo4j: Option<f64>,
    lance: Option<f64>,
}

async fn freshness(
    bin: &Path,
    config: &EpigraphConfig,
    setup: &Setup,
    out: &Path,
    tenant: &str,
    args: &Args,
) -> Result<Value> {
    let client = reqwest::Client::new();
    let kafka = setup.kafka(&config.kafka);
    ensure_topics(&kafka).await?;
    let mut child = spawn_run(bin, setup, out, "fresh-run", &[])?;
    let ready_by = Instant::now() + Duration::from_secs(120);
    while scrape(&client, &setup.metrics).await.is_none() {
        if Instant::now() > ready_by || child.try_wait()?.is_some() {
            let _ = child.kill();
            bail!("the live pipeline did not come up: see {}", out.display());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Let the (empty) restore and the first idle pass finish.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let result = freshness_measure(config, setup, &kafka, tenant, args).await;
    let metrics = scrape(&client, &setup.metrics).await.unwrap_or_default();
    let _ = child.kill();
    let _ = child.wait();
    let mut result = result?;
    result["live_pipeline"] = json!({
        "epochs": metrics.get("epigraph_epochs_total"),
        "epoch_seconds_sum": metrics.get("epigraph_epoch_seconds_sum").map(|v| round(*v, 3)),
        "vectors_embedded": metrics.get("epigraph_vectors_embedded_total"),
    });
    Ok(result)
}

async fn freshness_measure(
    config: &EpigraphConfig,
    setup: &Setup,
    kafka: &KafkaConfig,
    tenant: &str,
    args: &Args,
) -> Result<Value> {
    let producer = EventProducer::new(kafka)?;
    let graph = Neo4jSink::connect(&config.neo4j).await?.graph().clone();
    let db = lancedb::connect(&setup.lance_dir.display().to_string())
        .read_consistency_interval(Duration::ZERO)
        .execute()
        .await?;
    let table = db
        .open_table(&config.lancedb.memory_table)
        .execute()
        .await?;
    let pending: Arc<tokio::sync::Mutex<Vec<Pending>>> = Arc::default();
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));

    let poller = {
        let pending = pending.clone();
        let done = done.clone();
        let tenant = tenant.to_string();
        let poll = Duration::from_millis(args.poll_ms);
        tokio::spawn(async move {
            let mut rounds = 0u64;
            let mut query_ms = Vec::new();
            loop {
                let finished = done.load(std::sync::atomic::Ordering::SeqCst);
                let (want_neo, want_lance): (Vec<String>, Vec<String>) = {
                    let p = pending.lock().await;
                    (
                        p.iter()
                            .filter(|e| e.neo4j.is_none())
                            .map(|e| e.id.clone())
                            .collect(),
                        p.iter()
                            .filter(|e| e.lance.is_none())
                            .map(|e| e.id.clone())
                            .collect(),
                    )
                };
                if finished && want_neo.is_empty() && want_lance.is_empty() {
                    break;
                }
                let t = Instant::now();
                let mut seen_neo = Vec::new();
                if !want_neo.is_empty() {
                    let mut rows = graph
                        .execute(
                            query(
                                "MATCH (n:Node) WHERE n.tenant = $tenant AND n.source_id IN $ids \
                                 AND n:Source RETURN n.source_id AS id",
                            )
                            .param("tenant", tenant.clone())
                            .param("ids", want_neo.clone()),
                        )
                        .await?;
                    while let Some(row) = rows.next().await? {
                        seen_neo.push(row.get::<String>("id")?);
                    }
                }
                let neo_at = Instant::now();
                let mut seen_lance = Vec::new();
                if !want_lance.is_empty() {
                    let list = want_lance
                        .iter()
                        .map(|id| format!("'{id}'"))
                        .collect::<Vec<_>>()
                        .join(", ");
                    let batches: Vec<RecordBatch> = table
                        .query()
                        .only_if(format!("tenant = '{tenant}' AND source_id IN ({list})"))
                        .select(Select::columns(&["source_id"]))
                        .execute()
                        .await?
                        .try_collect()
                        .await?;
                    for b in &batches {
                        if let Some(col) = b
                            .column_by_name("source_id")
                            .and_then(|c| c.as_any().downcast_ref::<StringArray>())
                        {
                            seen_lance.extend(col.iter().flatten().map(str::to_string));
                        }
                    }
                }
                let lance_at = Instant::now();
                query_ms.push(t.elapsed().as_secs_f64() * 1000.0);
                {
                    let mut p = pending.lock().await;
                    for e in p.iter_mut() {
                        if e.neo4j.is_none() && seen_neo.contains(&e.id) {
                            e.neo4j =
                                Some(neo_at.duration_since(e.published).as_secs_f64() * 1000.0);
                        }
                        if e.lance.is_none() && seen_lance.contains(&e.id) {
                            e.lance =
                                Some(lance_at.duration_since(e.published).as_secs_f64() * 1000.0);
                        }
                    }
                }
                rounds += 1;
                tokio::time::sleep(poll.saturating_sub(t.elapsed())).await;
            }
            query_ms.sort_by(f64::total_cmp);
            anyhow::Ok((rounds, query_ms))
        })
    };

    let now = epigraph_schemas::now_millis();
    let interval = Duration::from_secs_f64(1.0 / args.fresh_rate.max(0.1));
    let run_tag = std::process::id();
    let started = Instant::now();
    let mut publish_ms = Vec::new();
    for i in 0..args.fresh_events {
        let due = started + interval * i as u32;
        tokio::time::sleep_until(due.into()).await;
        let id = format!("fresh/{run_tag}/{i}");
        let body = json!({
            "kind": "chat",
            "source_id": id,
            "op": "upsert",
            "title": "#freshness",
            "body": format!(
                "We decided to ship the zq{run_tag}x{i} release to the Lisbon customers on Friday."
            ),
            "occurred_at": now + i as i64,
            "authors": [{"name": "Ana Fresh", "address": "ana.fresh@example.org"}],
            "participants": [],
            "thread_id": "fresh",
            "links": [],
            "extras": {},
        });
        let event = epigraph::serve::webhook::parse_event(body.to_string().as_bytes(), tenant, now)
            .map_err(anyhow::Error::msg)?;
        let t = Instant::now();
        pending.lock().await.push(Pending {
            id,
            published: t,
            neo4j: None,
            lance: None,
        });
        producer.publish(vec![event], |_| {}).await?;
        publish_ms.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let publishing = started.elapsed().as_secs_f64();
    // Wait for the stragglers (at most a minute), then stop the poller.
    let wait_until = Instant::now() + Duration::from_secs(60);
    loop {
        let left = pending
            .lock()
            .await
            .iter()
            .filter(|e| e.neo4j.is_none() || e.lance.is_none())
            .count();
        if left == 0 || Instant::now() > wait_until {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    // The poller stops once nothing is pending; drop what never arrived.
    pending
        .lock()
        .await
        .retain(|e| e.neo4j.is_some() && e.lance.is_some());
    let (rounds, query_ms) = poller.await??;
    let p = pending.lock().await;
    let sorted = |f: &dyn Fn(&Pending) -> Option<f64>| {
        let mut v: Vec<f64> = p.iter().filter_map(f).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let neo = sorted(&|e| e.neo4j);
    let lance = sorted(&|e| e.lance);
    let both = sorted(&|e| Some(e.neo4j?.max(e.lance?)));
    let stats = |v: &[f64]| {
        json!({
            "n": v.len(),
            "p50_ms": percentile(v, 0.5),
            "p99_ms": percentile(v, 0.99),
            "max_ms": v.last().map(|x| round(*x, 1)),
        })
    };
    publish_ms.sort_by(f64::total_cmp);
    Ok(json!({
        "events": args.fresh_events,
        "rate_per_s": args.fresh_rate,
        "achieved_rate_per_s": round(args.fresh_events as f64 / publishing, 2),
        "poll_ms": args.poll_ms,
        "poll_rounds": rounds,
        "poll_query_ms_p50": percentile(&query_ms, 0.5),
        "poll_query_ms_p99": percentile(&query_ms, 0.99),
        "publish_ack_ms_p50": percentile(&publish_ms, 0.5),
        "neo4j": stats(&neo),
        "lancedb": stats(&lance),
        "both": stats(&both),
        "never_visible": args.fresh_events - both.len(),
        "note": "from just before the produce call to the poll round that saw the Source node (Neo4j) / a memory row of the source (LanceDB); resolution = poll interval + query time",
    }))
}

// ---------------------------------------------------------------- main

fn machine() -> Value {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem_kib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
        })
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0);
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1).map(|m| m.trim().to_string()))
        })
        .unwrap_or_default();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    json!({
        "cores": cores,
        "ram_gib": round(mem_kib / 1024.0 / 1024.0, 1),
        "cpu": cpu,
        "loadavg_at_start": load.trim(),
    })
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<()> {
    let args = Args::parse();
    let pid = std::process::id();
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("/tmp/prate-{pid}")));
    std::fs::create_dir_all(&out)?;
    let bin = epigraph_binary()?;
    let config = EpigraphConfig::load(None).map_err(|e| anyhow::anyhow!("{e}"))?;
    let base = format!("prate-{pid}");
    let setup = |name: &str, port: u16, embed: bool| Setup {
        prefix: format!("{base}-{name}"),
        lance_dir: out.join(format!("lance-{name}")),
        state_dir: out.join(format!("state-{name}")),
        metrics: format!("127.0.0.1:{port}"),
        embed,
    };
    let plain = setup("plain", args.metrics_port, false);
    let embedded = setup("embed", args.metrics_port + 1, true);
    let fresh = setup("fresh", args.metrics_port + 2, true);
    let live = setup("live", args.metrics_port + 3, false);
    let tenant = format!("prate{pid}");
    let machine = machine();
    let started = Instant::now();

    eprintln!(
        "[{:.0}s] generating scale {}",
        started.elapsed().as_secs_f64(),
        args.scale
    );
    let corpus = out.join("corpus");
    run_epigraph(
        &bin,
        &plain,
        &[
            "gen",
            corpus.to_str().context("utf-8")?,
            "--seed",
            &args.seed.to_string(),
            "--scale",
            &args.scale.to_string(),
        ],
    )?;
    let corpus_bytes = std::fs::metadata(corpus.join("events.jsonl"))?.len();

    eprintln!(
        "[{:.0}s] publishing (no-embed prefix)",
        started.elapsed().as_secs_f64()
    );
    let publish_plain = publish(&bin, &plain, &corpus, &tenant)?;
    let published = publish_plain["summary"]["published"]
        .as_f64()
        .unwrap_or(0.0);

    eprintln!(
        "[{:.0}s] parts: kafka consume",
        started.elapsed().as_secs_f64()
    );
    let kafka = plain.kafka(&config.kafka);
    let consume = kafka_consume_rate(&kafka, &kafka.all_event_topics())?;
    eprintln!("[{:.0}s] parts: neo4j", started.elapsed().as_secs_f64());
    let neo4j = neo4j_rates(&config, args.rows, &format!("{base}-synthetic")).await?;
    eprintln!("[{:.0}s] parts: lancedb", started.elapsed().as_secs_f64());
    let lance = lance_rates(
        &out,
        args.rows,
        args.lance_batch,
        &format!("{base}-synthetic"),
    )
    .await?;
    let embed = if args.embed_sentences > 0 {
        eprintln!("[{:.0}s] parts: embedder", started.elapsed().as_secs_f64());
        embed_rate(&config, &corpus, args.embed_sentences)?
    } else {
        Value::Null
    };

    let scrape_every = Duration::from_millis(args.scrape_ms);
    eprintln!(
        "[{:.0}s] end to end without the embedder",
        started.elapsed().as_secs_f64()
    );
    let limit = Duration::from_secs(args.limit_s);
    let e2e_plain = end_to_end(
        &bin,
        &plain,
        &out,
        "run-plain",
        published,
        scrape_every,
        limit,
        None,
        None,
    )
    .await?;
    let e2e_live = if args.skip_live_run {
        Value::Null
    } else {
        eprintln!(
            "[{:.0}s] end to end, live, without the embedder",
            started.elapsed().as_secs_f64()
        );
        end_to_end(
            &bin,
            &live,
            &out,
            "run-live",
            published,
            scrape_every,
            limit,
            Some((&corpus, &tenant)),
            e2e_plain["last_scrape"]["graph_elements"].as_f64(),
        )
        .await?
    };
    let (publish_embed, e2e_embed) = if args.skip_embed_run {
        (Value::Null, Value::Null)
    } else {
        eprintln!(
            "[{:.0}s] end to end with the embedder",
            started.elapsed().as_secs_f64()
        );
        let p = publish(&bin, &embedded, &corpus, &tenant)?;
        let n = p["summary"]["published"].as_f64().unwrap_or(0.0);
        let run = end_to_end(
            &bin,
            &embedded,
            &out,
            "run-embed",
            n,
            scrape_every,
            limit,
            None,
            None,
        )
        .await?;
        (p, run)
    };
    eprintln!("[{:.0}s] freshness", started.elapsed().as_secs_f64());
    let fresh_result = freshness(&bin, &config, &fresh, &out, &format!("{tenant}f"), &args).await?;

    let result = json!({
        "benchmark": "pipeline-rate",
        "date_utc_unix": epigraph_schemas::now_millis() / 1000,
        "machine": machine,
        "profile": if cfg!(debug_assertions) { "debug (dev profile: workspace crates opt-level 0, dependencies 1)" } else { "release" },
        "parameters": {
            "scale": args.scale, "seed": args.seed, "rows": args.rows,
            "lance_batch": args.lance_batch, "embed_sentences": args.embed_sentences,
            "fresh_events": args.fresh_events, "fresh_rate": args.fresh_rate,
            "poll_ms": args.poll_ms, "scrape_ms": args.scrape_ms,
            "epoch_max_events": config.run.epoch_max_events, "epoch_max_ms": config.run.epoch_max_ms,
            "workers": config.run.workers, "prefix": base, "out": out.display().to_string(),
            "embedder": config.model.model_id(),
        },
        "corpus": { "events_jsonl_bytes": corpus_bytes, "published": published },
        "parts": {
            "publish_ingest_events": publish_plain,
            "kafka_consume": consume,
            "neo4j_insert": neo4j,
            "lancedb_add": lance,
            "embedder": embed,
        },
        "end_to_end": { "without_embedder": e2e_plain, "without_embedder_live": e2e_live, "with_embedder": e2e_embed, "publish_with_embedder_prefix": publish_embed },
        "freshness": fresh_result,
        "total_seconds": round(started.elapsed().as_secs_f64(), 1),
    });
    println!("{}", serde_json::to_string_pretty(&result)?);
    std::fs::write(out.join("result.json"), serde_json::to_vec_pretty(&result)?)?;

    if !args.keep {
        for s in [&plain, &embedded, &fresh, &live] {
            let k = s.kafka(&config.kafka);
            let _ = delete_topics(&k).await;
            if let Ok(sink) = Neo4jSink::connect(&config.neo4j).await {
                let _ = sink.with_view(&s.prefix).clear(None).await;
            }
        }
    }
    Ok(())
}
