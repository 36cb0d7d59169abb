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

mod freshness;
mod raw;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Parser;
use epigraph::config::EpigraphConfig;
use epigraph_sinks::neo4j::Neo4jSink;
use epigraph_sources::kafka::{KafkaConfig, delete_topics};
use serde_json::{Value, json};

use freshness::freshness;
use raw::{embed_rate, kafka_consume_rate, lance_rates, neo4j_rates};

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
    epigraph_benches::run_epigraph(bin, setup.envs(), args)
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

/// The Neo4j sink's census from a scrape (`epigraph_graph_write_rows` and `_seconds` by kind),
/// the costliest kind first, each with its share of the writes' time and its rows per second.
fn graph_writes_by_kind(metrics: &HashMap<String, f64>) -> Value {
    let kind_of = |name: &str, metric: &str| {
        name.strip_prefix(metric)?
            .strip_prefix("{kind=\"")?
            .strip_suffix("\"}")
            .map(str::to_string)
    };
    let mut kinds: Vec<(String, f64, f64)> = metrics
        .iter()
        .filter_map(|(name, &seconds)| {
            let kind = kind_of(name, "epigraph_graph_write_seconds")?;
            let rows = metrics
                .get(&format!("epigraph_graph_write_rows{{kind=\"{kind}\"}}"))
                .copied()
                .unwrap_or(0.0);
            Some((kind, rows, seconds))
        })
        .collect();
    kinds.sort_by(|a, b| b.2.total_cmp(&a.2));
    let total: f64 = kinds.iter().map(|k| k.2).sum();
    Value::Array(
        kinds
            .into_iter()
            .map(|(kind, rows, seconds)| {
                json!({
                    "kind": kind,
                    "rows": rows,
                    "seconds": round(seconds, 3),
                    "share_of_write_seconds": round(seconds / total.max(1e-9), 3),
                    "rows_per_s": (rows > 0.0).then(|| round(rows / seconds.max(1e-9), 0)),
                })
            })
            .collect(),
    )
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
        "graph_writes_by_kind": graph_writes_by_kind(&last),
        "lancedb_sink_seconds_sum": g("epigraph_sink_seconds_sum{sink=\"lancedb\"}"),
        "report": report,
    }))
}

// ---------------------------------------------------------------- freshness

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
    let bin = epigraph_benches::epigraph_binary();
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
