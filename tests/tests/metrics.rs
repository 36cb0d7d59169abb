//! `epigraph run` serves Prometheus metrics on `run.metrics_listen` while it runs: events in per
//! topic, epochs and their latency, sink latency and batch sizes, consumer lag, dead letters and
//! the live graph elements by kind.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use epigraph_tests::{TestEnv, serial};

/// `GET /metrics` as text, or `None` while nothing answers.
fn scrape(addr: &str) -> Option<String> {
    let mut stream = TcpStream::connect(addr).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
}

/// The value of the first sample line starting with `name`.
fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(name))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

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
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let mut run = env
        .command(&["run"])
        .env("EPIGRAPH_RUN__METRICS_LISTEN", &addr)
        .spawn()
        .expect("spawning epigraph run");
    let deadline = Instant::now() + Duration::from_secs(180);
    let text = loop {
        // The restore epoch is counted, applied to both sinks and committed, in that order.
        if let Some(text) = scrape(&addr)
            && sample(&text, "epigraph_graph_elements{kind=\"Source\"}") == Some(2.0)
            && sample(&text, "epigraph_consumer_lag{").is_some()
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
    let _ = run.kill();
    let _ = run.wait();
    let topic = format!("{}.events.document", env.kafka.topic_prefix);
    assert_eq!(
        sample(
            &text,
            &format!("epigraph_events_in_total{{topic=\"{topic}\"}}")
        ),
        Some(2.0),
        "{text}"
    );
    assert!(sample(&text, "epigraph_epochs_total").is_some_and(|n| n >= 1.0));
    assert!(sample(&text, "epigraph_epoch_seconds_count").is_some_and(|n| n >= 1.0));
    assert!(sample(&text, "epigraph_sink_seconds_count{sink=\"neo4j\"}").is_some_and(|n| n >= 1.0));
    assert!(
        sample(&text, "epigraph_sink_batch_writes_sum{sink=\"neo4j\"}").is_some_and(|n| n > 0.0)
    );
    assert_eq!(
        sample(
            &text,
            &format!("epigraph_consumer_lag{{topic=\"{topic}\",partition=\"0\"}}")
        ),
        Some(0.0),
        "{text}"
    );
    assert_eq!(sample(&text, "epigraph_dead_letters_total"), Some(0.0));
    assert_eq!(
        sample(&text, "epigraph_graph_elements{kind=\"Memory:Decision\"}"),
        Some(1.0)
    );
    assert_eq!(
        sample(&text, "epigraph_graph_elements{kind=\"Memory:Question\"}"),
        Some(1.0)
    );
}
