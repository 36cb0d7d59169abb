//! `epigraph run` serves Prometheus metrics on `run.metrics_listen` while it runs: events in per
//! topic, epochs and their latency, sink latency and batch sizes, consumer lag, dead letters and
//! the live graph elements by kind.

use std::time::{Duration, Instant};

use epigraph_tests::{TestEnv, free_local_addr, http_text, metric_sample, scrape_metrics, serial};

#[tokio::test(flavor = "multi_thread")]
async fn a_running_pipeline_exposes_its_metrics() {
    let _guard = serial().await;
    let env = TestEnv::new("metrics");
    std::fs::write(
        env.docs().join("a.md"),
        "# Atlas\n\nWe decided to ship Project Atlas in June.\n",
    )
    .unwrap();
    std::fs::write(
        env.docs().join("b.md"),
        "# Nimbus\n\nWho owns the Project Nimbus budget?\n",
    )
    .unwrap();
    let summary = env.ingest_docs();
    assert_eq!(summary["published"], 2, "{summary}");
    let addr = free_local_addr();
    let mut run = env
        .command(&["run"])
        .env("EPIGRAPH_RUN__METRICS_LISTEN", &addr)
        .spawn()
        .expect("spawning epigraph run");
    let deadline = Instant::now() + Duration::from_secs(180);
    let text = loop {
        // The restore epoch is counted, applied to both sinks and committed, in that order.
        if let Some(text) = scrape_metrics(&addr)
            && metric_sample(&text, "epigraph_graph_elements{kind=\"Source\"}") == Some(2.0)
            && metric_sample(&text, "epigraph_consumer_lag{").is_some()
        {
            break text;
        }
        assert!(
            Instant::now() < deadline,
            "metrics never showed the two sources"
        );
        if let Ok(Some(status)) = run.try_wait() {
            panic!("epigraph run exited early: {status}");
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    // The query service relays them to the workspace's health page (the browser cannot reach
    // the pipeline's port), and says so when the pipeline is gone.
    let server = env.serve_with_env(&[], &[("EPIGRAPH_RUN__METRICS_LISTEN", addr.as_str())]);
    let serve_addr = server.base.trim_start_matches("http://").to_string();
    let (status, relayed) = http_text(&serve_addr, "/metrics/pipeline").expect("serve answers");
    assert_eq!(status, 200, "{relayed}");
    assert!(
        metric_sample(&relayed, "epigraph_graph_elements{kind=\"Source\"}") == Some(2.0),
        "{relayed}"
    );
    let _ = run.kill();
    let _ = run.wait();
    let (status, body) = http_text(&serve_addr, "/metrics/pipeline").expect("serve answers");
    assert_eq!(status, 503, "{body}");
    let error: serde_json::Value = serde_json::from_str(&body).expect("a JSON error");
    assert!(
        error["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("do not answer") && m.contains(&addr)),
        "{body}"
    );
    let topic = format!("{}.events.document", env.kafka.topic_prefix);
    assert_eq!(
        metric_sample(
            &text,
            &format!("epigraph_events_in_total{{topic=\"{topic}\"}}")
        ),
        Some(2.0),
        "{text}"
    );
    assert!(metric_sample(&text, "epigraph_epochs_total").is_some_and(|n| n >= 1.0));
    assert!(metric_sample(&text, "epigraph_epoch_seconds_count").is_some_and(|n| n >= 1.0));
    assert!(
        metric_sample(&text, "epigraph_sink_seconds_count{sink=\"neo4j\"}")
            .is_some_and(|n| n >= 1.0)
    );
    assert!(
        metric_sample(&text, "epigraph_sink_batch_writes_sum{sink=\"neo4j\"}")
            .is_some_and(|n| n > 0.0)
    );
    assert_eq!(
        metric_sample(
            &text,
            &format!("epigraph_consumer_lag{{topic=\"{topic}\",partition=\"0\"}}")
        ),
        Some(0.0),
        "{text}"
    );
    assert_eq!(
        metric_sample(&text, "epigraph_dead_letters_total"),
        Some(0.0)
    );
    assert_eq!(
        metric_sample(&text, "epigraph_graph_elements{kind=\"Memory:Decision\"}"),
        Some(1.0)
    );
    assert_eq!(
        metric_sample(&text, "epigraph_graph_elements{kind=\"Memory:Question\"}"),
        Some(1.0)
    );
}

/// A pipeline that is never idle still folds its new rows into LanceDB's indexes every
/// `lancedb.index_every_secs` (readers slow down as unindexed rows pile up: docs/reliability.md),
/// and the count says whether a fold came from a drained topic (`idle`) or from that clock
/// (`busy`).
#[tokio::test(flavor = "multi_thread")]
async fn a_busy_pipeline_folds_new_rows_into_the_indexes_on_its_clock() {
    let _guard = serial().await;
    let env = TestEnv::new("indexclock");
    // Small epochs back to back: 50 events, 5 per epoch, each written to both stores and
    // committed before the next.
    let lines: Vec<String> = (0..50)
        .map(|i| {
            serde_json::json!({
                "kind": "chat", "source_id": format!("busy/{i}"), "op": "upsert",
                "title": format!("busy/{i}"),
                "body": format!("We decided that team {i} ships the Atlas milestone {i} in June."),
                "occurred_at": 1_780_000_000_000_i64 + i * 60_000,
            })
            .to_string()
        })
        .collect();
    let file = env.dir.path().join("busy.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let addr = free_local_addr();
    let mut run = env
        .command(&["run"])
        .env("EPIGRAPH_RUN__METRICS_LISTEN", &addr)
        .env("EPIGRAPH_RUN__EPOCH_MAX_EVENTS", "5")
        .env("EPIGRAPH_LANCEDB__INDEX_EVERY_SECS", "1")
        .env("EPIGRAPH_LANCEDB__COMPACT_EVERY_EPOCHS", "0")
        .spawn()
        .expect("spawning epigraph run");
    let deadline = Instant::now() + Duration::from_secs(300);
    let busy = "epigraph_lancedb_index_updates_total{when=\"busy\"}";
    let idle = "epigraph_lancedb_index_updates_total{when=\"idle\"}";
    // The restore reads what is on the topics in one epoch: the events come once it is live.
    let mut published = None;
    let (text, busy_for) = loop {
        if let Some(text) = scrape_metrics(&addr) {
            let events = metric_sample(&text, "epigraph_events_in_total{").unwrap_or(0.0);
            if published.is_none()
                && metric_sample(&text, "epigraph_epochs_total").is_some_and(|n| n >= 1.0)
            {
                let summary = epigraph_tests::ingest(&env, &["events", file.to_str().unwrap()]);
                assert_eq!(summary["published"], 50, "{summary}");
                published = Some(Instant::now());
            } else if let Some(start) = published
                && events >= 50.0
                && metric_sample(&text, "epigraph_consumer_lag{") == Some(0.0)
                && metric_sample(&text, idle).is_some_and(|n| n >= 1.0)
            {
                break (text, start.elapsed());
            }
        }
        assert!(Instant::now() < deadline, "the run never drained its topic");
        if let Ok(Some(status)) = run.try_wait() {
            panic!("epigraph run exited early: {status}");
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    let _ = run.kill();
    let _ = run.wait();
    let epochs = metric_sample(&text, "epigraph_epochs_total").unwrap_or(0.0);
    assert!(epochs >= 10.0, "50 events in epochs of 5: {epochs}");
    // The epochs and their writes took longer than the clock: it struck while they ran, and
    // once drained the run folded what was left as idle.
    assert!(
        busy_for > Duration::from_millis(1500),
        "the events were done in {busy_for:?}: too fast to test a 1 s clock"
    );
    assert!(
        metric_sample(&text, busy).is_some_and(|n| n >= 1.0),
        "no fold while busy after {epochs} epochs over {busy_for:?}:\n{text}"
    );
}
