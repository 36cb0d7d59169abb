//! Vectors catch up behind the graph and the full-text index: `epigraph run` writes each epoch's
//! rows without waiting for the embedder, a background task fills their vectors (also after a
//! restart), unchanged text is never embedded again (the cache by text hash), the vector index
//! appears once enough rows have vectors, and a running pipeline reports its vector lag and
//! compacts the table.

use std::sync::Arc;
use std::time::{Duration, Instant};

use epigraph_sinks::embed::{EmbedConfig, Embedder};
use epigraph_sinks::lance::{LanceConfig, LanceSink, SearchMode, SearchRequest};
use epigraph_tests::{
    TestEnv, free_local_addr, last_json_line, metric_sample, scrape_metrics, serial,
};

const ATLAS: &str = "# Atlas\n\nWe decided to ship Project Atlas in June.\n\n\
    Who owns the Atlas budget?\n\nThe Atlas launch review is on Friday.\n";
const NIMBUS: &str = "# Nimbus\n\nProject Nimbus must not exceed $40K per month.\n";

/// A test environment with a LanceDB folder of its own (table-wide counts are exact).
fn env(prefix: &str) -> TestEnv {
    let mut env = TestEnv::new(prefix);
    env.lance_dir = env.dir.path().join("lancedb");
    env
}

async fn rows(env: &TestEnv, filter: &str) -> usize {
    let filter = format!("tenant = '{}' AND ({filter})", env.tenant);
    env.lance().await.count(Some(filter)).await.unwrap()
}

/// `epigraph run --until-idle` with extra environment variables, parsed report.
fn run(env: &TestEnv, vars: &[(&str, &str)]) -> serde_json::Value {
    let mut command = env.command(&["run", "--until-idle"]);
    for (key, value) in vars {
        command.env(key, value);
    }
    let output = command.output().expect("epigraph run");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    last_json_line(&stdout)
}

#[tokio::test(flavor = "multi_thread")]
async fn vectors_catch_up_after_a_restart_and_an_edit_embeds_only_the_changed_statement() {
    let _guard = serial().await;
    let env = env("vectors");
    std::fs::write(env.docs().join("a.md"), ATLAS).unwrap();
    std::fs::write(env.docs().join("b.md"), NIMBUS).unwrap();
    env.ingest_docs();

    // Without the embedder the rows are written with null vectors (full text only).
    let report = run(&env, &[("EPIGRAPH_LANCEDB__EMBED", "false")]);
    assert_eq!(report["vectors_embedded"], 0, "{report}");
    let total = rows(&env, "true").await;
    let atlas = rows(&env, "source_id = 'a.md'").await;
    assert_eq!((total, atlas), (4, 3), "the four statements, three of a.md");
    assert_eq!(rows(&env, "vector IS NULL").await, 4);

    assert_eq!(
        env.lance().await.count_chunks(None).await.unwrap(),
        2,
        "a chunk per source"
    );

    // The next run (with the embedder) writes nothing new, finds the four rows and two chunks
    // without vectors and embeds them; the vector index is created (threshold 4) once they
    // have one.
    let report = run(&env, &[("EPIGRAPH_LANCEDB__VECTOR_INDEX_MIN_ROWS", "4")]);
    assert_eq!(report["reconciled_writes"], 0, "{report}");
    assert_eq!(report["vectors_embedded"], 4 + 2, "{report}");
    assert_eq!(report["vectors_reused"], 0, "{report}");
    assert_eq!(rows(&env, "vector IS NULL").await, 0);
    assert_eq!(
        env.lance().await.vector_index_rows().await.unwrap(),
        Some((4, 0))
    );

    // One statement of a.md changes: the new version's rows replace all three of a.md, the
    // two unchanged texts take their vectors from the rows they replace; a.md's one chunk
    // has new text.
    std::fs::write(
        env.docs().join("a.md"),
        ATLAS.replace("Who owns the Atlas budget?", "Dana owns the Atlas budget."),
    )
    .unwrap();
    let summary = env.ingest_docs();
    assert_eq!(summary["published"], 1, "{summary}");
    let report = run(&env, &[]);
    assert_eq!(report["vectors_embedded"], 1 + 1, "{report}");
    assert_eq!(report["vectors_reused"], 2, "{report}");
    assert_eq!(rows(&env, "true").await, 4);
    assert_eq!(rows(&env, "vector IS NULL").await, 0);

    // Vector search finds the edited statement by meaning.
    let embedder = Embedder::load(&EmbedConfig::default()).expect("model");
    let reader = LanceSink::open(
        &LanceConfig {
            dir: env.lance_dir.display().to_string(),
            read_consistency_ms: 0,
            ..LanceConfig::default()
        },
        Some(Arc::new(embedder)),
    )
    .await
    .unwrap();
    let hits = reader
        .search(&SearchRequest {
            query: "who is responsible for the money of Atlas".into(),
            k: 1,
            tenant: env.tenant.clone(),
            mode: SearchMode::Vector,
            types: Vec::new(),
            candidates: Some(1),
        })
        .await
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].text, "Dana owns the Atlas budget.");
}

/// Scrapes until `done` accepts the metrics.
fn wait_for(addr: &str, what: &str, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        if let Some(text) = scrape_metrics(addr)
            && done(&text)
        {
            return text;
        }
        assert!(Instant::now() < deadline, "metrics never showed {what}");
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// A child process killed when the test ends, also when it fails.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_running_pipeline_reports_its_vector_lag_and_compacts_every_epoch() {
    let _guard = serial().await;
    let env = env("veclag");
    std::fs::write(env.docs().join("a.md"), ATLAS).unwrap();
    env.ingest_docs();
    let addr = free_local_addr();
    let pipeline = KillOnDrop(
        env.command(&["run"])
            .env("EPIGRAPH_RUN__METRICS_LISTEN", &addr)
            .env("EPIGRAPH_LANCEDB__COMPACT_EVERY_EPOCHS", "1")
            .spawn()
            .expect("spawning epigraph run"),
    );
    // The restore's three rows and one chunk get their vectors in the background.
    wait_for(&addr, "the restore's vectors", |m| {
        metric_sample(m, "epigraph_vectors_embedded_total") == Some(4.0)
            && metric_sample(m, "epigraph_vector_pending_rows") == Some(0.0)
    });
    // A live epoch: the row and chunk are written, the tables compacted once, the vectors
    // follow.
    std::fs::write(env.docs().join("b.md"), NIMBUS).unwrap();
    env.ingest_docs();
    let text = wait_for(&addr, "the live epoch's vector", |m| {
        metric_sample(m, "epigraph_epochs_total") == Some(2.0)
            && metric_sample(m, "epigraph_lancedb_compactions_total") == Some(1.0)
            && metric_sample(m, "epigraph_vectors_embedded_total") == Some(6.0)
            && metric_sample(m, "epigraph_vector_pending_rows") == Some(0.0)
    });
    drop(pipeline);
    assert_eq!(
        metric_sample(&text, "epigraph_vector_lag_seconds"),
        Some(0.0),
        "{text}"
    );
    assert_eq!(
        metric_sample(&text, "epigraph_vectors_reused_total"),
        Some(0.0),
        "{text}"
    );
    let batches = metric_sample(&text, "epigraph_embed_batch_seconds_count").unwrap_or(0.0);
    // Memory rows and chunks are embedded in separate batches.
    assert!(
        (4.0..=6.0).contains(&batches),
        "{batches} embedding batches\n{text}"
    );
    assert_eq!(rows(&env, "vector IS NULL").await, 0);
    assert_eq!(rows(&env, "true").await, 4);
}

/// The chunk size this test's arithmetic is written for (the default is 200 tokens sharing 30).
const CHUNKS_OF_1200: [(&str, &str); 2] = [
    ("EPIGRAPH_LANCEDB__CHUNK_TOKENS", "1200"),
    ("EPIGRAPH_LANCEDB__CHUNK_OVERLAP_TOKENS", "100"),
];

/// A ~12,000-character document: 120 distinct sentences in paragraphs of four.
fn long_document(last: &str) -> String {
    let subjects = ["Atlas", "Nimbus", "Orion", "Vega", "Lyra"];
    let mut text = String::from("# Handbook\n\n");
    for i in 0..119 {
        text.push_str(&format!(
            "Entry {i:03}: the {} team reviewed item {i} of the handbook and wrote it down for later. ",
            subjects[i % subjects.len()]
        ));
        if i % 4 == 3 {
            text.push_str("\n\n");
        }
    }
    text.push_str(last);
    text.push('\n');
    text
}

#[tokio::test(flavor = "multi_thread")]
async fn source_text_is_chunked_with_vectors_and_the_chunks_follow_their_version() {
    let _guard = serial().await;
    let env = env("chunks");
    let chunks = |filter: &'static str| {
        let env = &env;
        async move {
            let filter = format!("tenant = '{}' AND ({filter})", env.tenant);
            env.lance().await.count_chunks(Some(filter)).await.unwrap()
        }
    };
    let first = "Dana will publish the handbook on Friday.";
    std::fs::write(env.docs().join("a.md"), long_document(first)).unwrap();
    std::fs::write(env.docs().join("b.md"), NIMBUS).unwrap();
    env.ingest_docs();
    let report = run(&env, &CHUNKS_OF_1200);
    // ~12,000 characters in chunks of ≤ 4,800 sharing ~400: three; the short note: one.
    assert_eq!(chunks("source_id = 'a.md'").await, 3);
    assert_eq!(chunks("source_id = 'b.md'").await, 1);
    assert_eq!(
        chunks("vector IS NULL").await,
        0,
        "every chunk has its vector"
    );
    let memory = rows(&env, "true").await;
    assert_eq!(
        report["vectors_embedded"].as_u64(),
        Some(memory as u64 + 4),
        "each memory row and chunk embedded once: {report}"
    );

    // The last sentence changes: a new version, whose first two chunks have the old texts.
    let atlas = rows(&env, "source_id = 'a.md'").await;
    std::fs::write(
        env.docs().join("a.md"),
        long_document("Dana will publish the handbook next Monday instead."),
    )
    .unwrap();
    env.ingest_docs();
    let report = run(&env, &CHUNKS_OF_1200);
    assert_eq!(chunks("source_id = 'a.md'").await, 3);
    assert_eq!(chunks("vector IS NULL").await, 0);
    assert_eq!(
        report["vectors_embedded"], 2,
        "the new statement and the last chunk: {report}"
    );
    assert_eq!(
        report["vectors_reused"].as_u64(),
        Some(atlas as u64 - 1 + 2),
        "{report}"
    );

    // Deleted while the pipeline is down: its chunks go with it.
    std::fs::remove_file(env.docs().join("a.md")).unwrap();
    env.ingest_docs();
    run(&env, &CHUNKS_OF_1200);
    assert_eq!(chunks("source_id = 'a.md'").await, 0);
    assert_eq!(chunks("true").await, 1);
}
