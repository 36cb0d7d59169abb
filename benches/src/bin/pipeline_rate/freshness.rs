//! Freshness: publish → visible in Neo4j, in LanceDB, in both, for a live `epigraph run`.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use epigraph::config::EpigraphConfig;
use epigraph_sinks::neo4j::Neo4jSink;
use epigraph_sources::kafka::{EventProducer, KafkaConfig, ensure_topics};
use futures::TryStreamExt;
use lancedb::arrow::arrow_array::{RecordBatch, StringArray};
use lancedb::query::{ExecutableQuery, QueryBase, Select};
use neo4rs::query;
use serde_json::{Value, json};

use super::*;

struct Pending {
    id: String,
    published: Instant,
    neo4j: Option<f64>,
    lance: Option<f64>,
}

pub(crate) async fn freshness(
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
