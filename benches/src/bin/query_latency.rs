//! `query-latency`: p50/p99 latency of `/v1/search` and `/v1/context` at 1, 8 and 32 concurrent
//! clients over a large memory, next to raw LanceDB hybrid search (BM25 + vector, fused, no
//! graph state) for the same queries in the same run.
//!
//! Setup (skipped when the tenant already holds `--memories` rows): `epigraph gen` writes a
//! labelled organisation, `epigraph ingest events` publishes it to its own topics and
//! `epigraph run --until-idle` builds the graph in Neo4j and the rows in LanceDB without
//! embedding (100k sentences through the model would take most of an hour on two cores).
//! The rows then get **synthetic vectors** — unit vectors seeded by a hash of the text — since
//! the cost of a flat vector scan does not depend on the values; retrieval *quality* is
//! measured by `epigraph eval retrieval`, not here. Queries are embedded by the real model.
//!
//! ```text
//! query-latency --memories 100000 --requests 200 --clients 1,8,32
//! ```

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Parser;
use epigraph::config::EpigraphConfig;
use epigraph_sinks::lance::{LanceSink, SearchMode, SearchRequest};

#[derive(Debug, Parser)]
#[command(about = "Latency of /v1/search and /v1/context under concurrency, next to raw LanceDB")]
struct Args {
    /// Memory objects wanted in the tenant (setup generates events until there are this many).
    #[arg(long, default_value_t = 100_000)]
    memories: usize,
    /// Generated events for the setup.
    #[arg(long, default_value_t = 80_000)]
    events: u64,
    /// Tenant holding the benchmark's memory.
    #[arg(long, default_value = "latency")]
    tenant: String,
    /// Topic prefix of the benchmark's own topics.
    #[arg(long, default_value = "latency")]
    prefix: String,
    /// LanceDB folder (default `$EPIGRAPH_HOME/latency-lancedb`).
    #[arg(long)]
    lance_dir: Option<PathBuf>,
    /// Concurrency levels.
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 8, 32])]
    clients: Vec<usize>,
    /// Requests per endpoint and level.
    #[arg(long, default_value_t = 200)]
    requests: usize,
}

/// A unit vector seeded by a hash of the text (FNV-1a, then xorshift).
fn synthetic_vector(text: &str) -> Vec<f32> {
    let mut state = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    let mut v: Vec<f32> = (0..epigraph_sinks::embed::DIMENSIONS)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    (sorted[i] * 100.0).round() / 100.0
}

/// Run `requests` calls of `call` spread over `clients` concurrent tasks; latencies in ms.
async fn measure<F, Fut>(clients: usize, requests: usize, call: F) -> Result<(Vec<f64>, f64)>
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<()>> + Send,
{
    let call = Arc::new(call);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..clients {
        let call = call.clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut i = c;
            while i < requests {
                let t = Instant::now();
                call(i).await?;
                latencies.push(t.elapsed().as_secs_f64() * 1000.0);
                i += clients;
            }
            anyhow::Ok(latencies)
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await??);
    }
    let seconds = started.elapsed().as_secs_f64();
    all.sort_by(f64::total_cmp);
    Ok((all, requests as f64 / seconds))
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<()> {
    let args = Args::parse();
    let home = epigraph_sinks::embed::default_home();
    let lance_dir = args
        .lance_dir
        .clone()
        .unwrap_or_else(|| home.join("latency-lancedb"));
    let mut config = EpigraphConfig::load(None).map_err(|e| anyhow::anyhow!("{e}"))?;
    config.kafka.topic_prefix = args.prefix.clone();
    config.lancedb.dir = lance_dir.display().to_string();
    config.state_dir = Some(home.join("latency-state"));
    config.serve.report_usage = false;
    config.serve.max_concurrent_requests = 256;

    let reader = LanceSink::open(&config.lancedb, None)
        .await?
        .with_view(&args.prefix);
    let filter = format!("tenant = '{}'", args.tenant);
    let mut rows = reader.count(Some(filter.clone())).await?;
    if rows < args.memories {
        let bin = epigraph_benches::epigraph_binary();
        let envs = [
            ("EPIGRAPH_KAFKA__TOPIC_PREFIX", args.prefix.clone()),
            ("EPIGRAPH_LANCEDB__DIR", config.lancedb.dir.clone()),
            ("EPIGRAPH_LANCEDB__EMBED", "false".to_string()),
            (
                "EPIGRAPH_STATE_DIR",
                home.join("latency-state").display().to_string(),
            ),
            ("RUST_LOG", "warn".to_string()),
        ];
        let corpus = home.join(format!("latency-corpus-{}", args.events));
        let t = Instant::now();
        if !corpus.join("events.jsonl").exists() {
            eprintln!("setup: generating {} events", args.events);
            epigraph_benches::run_epigraph(
                &bin,
                envs.iter().map(|(k, v)| (*k, v.as_str())),
                &[
                    "gen",
                    corpus.to_str().context("utf-8")?,
                    "--seed",
                    "11",
                    "--scale",
                    &args.events.to_string(),
                ],
            )?;
        }
        eprintln!("setup: publishing");
        let events = corpus.join("events.jsonl");
        epigraph_benches::run_epigraph(
            &bin,
            envs.iter().map(|(k, v)| (*k, v.as_str())),
            &[
                "ingest",
                "events",
                events.to_str().context("utf-8")?,
                "--tenant",
                &args.tenant,
            ],
        )?;
        eprintln!("setup: running the pipeline (no embedding)");
        epigraph_benches::run_epigraph(
            &bin,
            envs.iter().map(|(k, v)| (*k, v.as_str())),
            &["run", "--until-idle"],
        )?;
        rows = reader.count(Some(filter.clone())).await?;
        eprintln!(
            "setup: {rows} memory rows in {:.0} s",
            t.elapsed().as_secs_f64()
        );
    }
    let t = Instant::now();
    let filled = reader
        .backfill_vectors(Some(&filter), 5000, |texts| {
            Ok(texts.iter().map(|t| synthetic_vector(t)).collect())
        })
        .await?;
    if filled > 0 {
        eprintln!(
            "setup: {filled} synthetic vectors in {:.0} s",
            t.elapsed().as_secs_f64()
        );
        reader.optimize().await?;
    }

    let state = epigraph::serve::open_state(&config).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, epigraph::serve::router(state)).await });
    let lance = LanceSink::open(
        &config.lancedb,
        Some(Arc::new(epigraph_sinks::embed::Embedder::load(
            &config.model,
        )?)),
    )
    .await?;

    // Queries: four-word phrases from the corpus' memory texts (deterministic).
    let sample = reader
        .search(&SearchRequest {
            query: "project launch budget decision customer".into(),
            k: 200,
            tenant: args.tenant.clone(),
            mode: SearchMode::Text,
            types: Vec::new(),
            candidates: Some(400),
        })
        .await?;
    let queries: Arc<Vec<String>> = Arc::new(
        sample
            .iter()
            .map(|h| {
                h.text
                    .split_whitespace()
                    .take(5)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .filter(|q| q.len() > 8)
            .collect(),
    );
    if queries.is_empty() {
        bail!("no queries: the tenant has no text");
    }
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(64)
        .build()?;
    let mut report = Vec::new();
    for &clients in &args.clients {
        for target in ["lancedb", "search", "context"] {
            let (queries, client, lance, tenant) = (
                queries.clone(),
                client.clone(),
                lance.clone(),
                args.tenant.clone(),
            );
            let base = format!("http://{addr}");
            let (latencies, rate) = measure(clients, args.requests, move |i| {
                let q = queries[i % queries.len()].clone();
                let (client, lance, tenant, base) =
                    (client.clone(), lance.clone(), tenant.clone(), base.clone());
                async move {
                    match target {
                        "lancedb" => {
                            lance
                                .search(&SearchRequest {
                                    query: q,
                                    k: 10,
                                    tenant,
                                    mode: SearchMode::Hybrid,
                                    types: Vec::new(),
                                    candidates: None,
                                })
                                .await?;
                        }
                        "search" => {
                            let r = client
                                .get(format!("{base}/v1/search"))
                                .query(&[
                                    ("q", q.as_str()),
                                    ("k", "10"),
                                    ("tenant", tenant.as_str()),
                                ])
                                .send()
                                .await?;
                            if !r.status().is_success() {
                                bail!("search: {}", r.status());
                            }
                            r.bytes().await?;
                        }
                        _ => {
                            let r = client
                                .post(format!("{base}/v1/context?tenant={tenant}"))
                                .json(&serde_json::json!({"query": q, "budget_tokens": 2000}))
                                .send()
                                .await?;
                            if !r.status().is_success() {
                                bail!("context: {}", r.status());
                            }
                            r.bytes().await?;
                        }
                    }
                    Ok(())
                }
            })
            .await?;
            let line = serde_json::json!({
                "target": target, "clients": clients, "requests": latencies.len(),
                "p50_ms": percentile(&latencies, 0.5), "p99_ms": percentile(&latencies, 0.99),
                "requests_per_s": (rate * 10.0).round() / 10.0,
            });
            eprintln!("{line}");
            report.push(line);
        }
    }
    println!(
        "{}",
        serde_json::json!({"memory_rows": rows, "tenant": args.tenant, "profile": if cfg!(debug_assertions) { "dev" } else { "release" }, "results": report})
    );
    Ok(())
}
