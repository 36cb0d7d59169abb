//! The foundation slice end to end: docs → Kafka → run → Neo4j + LanceDB → search.

use epigraph_tests::{TestEnv, neo4j, neo4j_count, neo4j_memory_texts, serial};

const BUDGET: &str = "# Budget memo\n\nWe decided to cap the Q3 marketing budget at 250K euros after the board review.\n";
const HIRING: &str = "# Hiring plan\n\nThe platform team will hire two backend engineers for the ingestion pipeline.\n";

async fn lance_texts(env: &TestEnv) -> Vec<(String, String)> {
    let lance = env.lance().await;
    let hits = lance
        .search(&epigraph_sinks::lance::SearchRequest {
            query: "budget hiring engineers marketing platform".into(),
            k: 100,
            tenant: env.tenant.clone(),
            mode: epigraph_sinks::lance::SearchMode::Text,
            types: Vec::new(),
            candidates: None,
        })
        .await
        .expect("search");
    let mut rows: Vec<(String, String)> = hits.into_iter().map(|h| (h.source_id, h.text)).collect();
    rows.sort();
    rows
}

#[tokio::test(flavor = "multi_thread")]
async fn documents_flow_to_both_stores_and_follow_edits_and_deletes() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-docs");
    let docs = env.docs();
    std::fs::write(docs.join("budget.md"), BUDGET).unwrap();
    std::fs::write(docs.join("hiring.md"), HIRING).unwrap();

    let summary = env.ingest_docs();
    assert_eq!(summary["published"], 2, "{summary}");
    env.run_until_idle();

    let graph = neo4j();
    let sources = neo4j_count(
        &graph,
        "MATCH (s:Source:Document {tenant: $tenant}) RETURN count(s) AS n",
        &env.tenant,
    )
    .await;
    let memories = neo4j_count(
        &graph,
        "MATCH (m:Memory {tenant: $tenant})-[:DERIVED_FROM]->(:Source) RETURN count(m) AS n",
        &env.tenant,
    )
    .await;
    assert_eq!((sources, memories), (2, 2));
    let lance = env.lance().await;
    let filter = format!("tenant = '{}'", env.tenant);
    assert_eq!(lance.count(Some(filter.clone())).await.unwrap(), 2);

    // Search finds the right document, through the real HTTP endpoint.
    {
        let server = env.serve();
        let answer = server.get(&format!(
            "/v1/search?q=marketing%20budget%20cap&k=2&tenant={}",
            env.tenant
        ));
        assert_eq!(answer["results"][0]["source_id"], "budget.md", "{answer}");
        let answer = server.get(&format!(
            "/v1/search?q=backend%20engineers&k=1&tenant={}",
            env.tenant
        ));
        assert_eq!(answer["results"][0]["source_id"], "hiring.md", "{answer}");
        assert!(
            answer["results"][0]["snippet"]
                .as_str()
                .unwrap()
                .contains("backend engineers")
        );
    }

    // Edit: the old text is gone from both stores, the new one is found.
    std::fs::write(
        docs.join("budget.md"),
        "# Budget memo\n\nThe Q3 marketing budget is now 300K euros, replacing the earlier cap.\n",
    )
    .unwrap();
    let summary = env.ingest_docs();
    assert_eq!(
        (summary["published"].as_u64(), summary["unchanged"].as_u64()),
        (Some(1), Some(1)),
        "{summary}"
    );
    env.run_until_idle();
    let texts = neo4j_memory_texts(&graph, &env.tenant).await;
    assert!(
        texts.iter().any(|t| t.contains("300K")) && !texts.iter().any(|t| t.contains("250K")),
        "{texts:?}"
    );
    let rows = lance_texts(&env).await;
    assert!(
        rows.iter().any(|(_, t)| t.contains("300K"))
            && !rows.iter().any(|(_, t)| t.contains("250K")),
        "{rows:?}"
    );
    {
        let server = env.serve();
        let answer = server.get(&format!(
            "/v1/search?q=300K%20euros&k=1&tenant={}",
            env.tenant
        ));
        assert_eq!(answer["results"][0]["source_id"], "budget.md", "{answer}");
    }

    // Delete: gone from both stores.
    std::fs::remove_file(docs.join("budget.md")).unwrap();
    let summary = env.ingest_docs();
    assert_eq!(summary["tombstoned"], 1, "{summary}");
    let report = env.run_until_idle();
    let sources = neo4j_count(
        &graph,
        "MATCH (s:Source {tenant: $tenant}) RETURN count(s) AS n",
        &env.tenant,
    )
    .await;
    assert_eq!(sources, 1, "run: {report}");
    assert_eq!(neo4j_memory_texts(&graph, &env.tenant).await.len(), 1);
    assert_eq!(lance.count(Some(filter)).await.unwrap(), 1);
    assert!(
        lance_texts(&env)
            .await
            .iter()
            .all(|(source, _)| source == "hiring.md")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_run_changes_nothing() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-idem");
    std::fs::write(
        env.docs().join("note.txt"),
        "The staging cluster moves to the new region next week.",
    )
    .unwrap();
    env.ingest_docs();
    env.run_until_idle();
    let graph = neo4j();
    let before = neo4j_memory_texts(&graph, &env.tenant).await;
    let hashes_before = env.lance().await.state().await.unwrap();

    let report = env.run_until_idle();
    assert_eq!(
        report["reconciled_writes"], 0,
        "a clean restart rewrites nothing: {report}"
    );
    assert_eq!(report["live_writes"], 0, "{report}");
    assert_eq!(neo4j_memory_texts(&graph, &env.tenant).await, before);
    assert_eq!(env.lance().await.state().await.unwrap(), hashes_before);

    // Re-ingesting unchanged files publishes nothing.
    let summary = env.ingest_docs();
    assert_eq!(
        (summary["published"].as_u64(), summary["unchanged"].as_u64()),
        (Some(0), Some(1)),
        "{summary}"
    );
}

/// Writes `text` to `path` with the modification time `at_ms`.
fn write_at(path: &std::path::Path, text: &str, at_ms: i64) {
    std::fs::write(path, text).unwrap();
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(at_ms as u64);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(at)
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edited_documents_kept_statements_stay_valid_from_when_they_were_written() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-written");
    let path = env.docs().join("plan.md");
    let (march, april) = (1_772_323_200_000, 1_775_001_600_000); // 2026-03-01, 2026-04-01
    const KEPT: &str =
        "The platform team will hire two backend engineers for the ingestion pipeline.";
    write_at(
        &path,
        &format!("# Plan\n\n{KEPT}\n\nWe decided to launch Atlas on May 13, 2026.\n"),
        march,
    );
    env.ingest_docs();
    env.run_until_idle();
    write_at(
        &path,
        &format!("# Plan\n\n{KEPT}\n\nWe decided to launch Atlas on June 3, 2026.\n"),
        april,
    );
    let summary = env.ingest_docs();
    assert_eq!(summary["published"], 1, "{summary}");
    env.run_until_idle();
    let mut rows = neo4j()
        .execute(
            neo4rs::query(
                "MATCH (m:Memory {tenant: $tenant}) RETURN m.text AS text, m.t_valid AS t",
            )
            .param("tenant", env.tenant.as_str()),
        )
        .await
        .expect("neo4j query");
    let mut valid = std::collections::BTreeMap::new();
    while let Some(row) = rows.next().await.expect("neo4j row") {
        valid.insert(
            row.get::<String>("text").expect("text"),
            row.get::<i64>("t").expect("t_valid"),
        );
    }
    // The kept statement is valid from March, when it was written; the changed one from April.
    assert_eq!(valid.get(KEPT), Some(&march), "{valid:?}");
    assert_eq!(
        valid.get("We decided to launch Atlas on June 3, 2026."),
        Some(&april),
        "{valid:?}"
    );
}

/// PDF and Office files in a documents folder are read as text: their statements reach both
/// stores and search; a damaged one is a dead letter with the reason.
#[tokio::test(flavor = "multi_thread")]
async fn pdf_and_office_files_in_a_folder_are_read_as_documents() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-formats");
    let docs = env.docs();
    let fixtures = epigraph_schemas::manifest_dir!().join("../sources/tests/fixtures/formats");
    for name in ["memo.pdf", "plan.docx", "review.pptx", "budget.xlsx"] {
        std::fs::copy(fixtures.join(name), docs.join(name)).unwrap();
    }
    std::fs::write(docs.join("broken.pptx"), b"not a presentation").unwrap();
    let summary = env.ingest_docs();
    assert_eq!(
        (
            summary["published"].as_u64(),
            summary["dead_lettered"].as_u64()
        ),
        (Some(4), Some(1)),
        "{summary}"
    );
    env.run_until_idle();
    let graph = neo4j();
    let sources = neo4j_count(
        &graph,
        "MATCH (s:Source:Document {tenant: $tenant}) RETURN count(s) AS n",
        &env.tenant,
    )
    .await;
    assert_eq!(sources, 4);
    let texts = neo4j_memory_texts(&graph, &env.tenant).await;
    for expected in [
        "EUR 2.3M valuation cap",                  // memo.pdf
        "Maya Chen owns the launch",               // plan.docx
        "moved the Vortex launch to 7 April 2027", // review.pptx
    ] {
        assert!(
            texts.iter().any(|t| t.contains(expected)),
            "{expected}: {texts:?}"
        );
    }
    let server = env.serve();
    for (query, source) in [
        ("seed%20round%20valuation%20cap", "memo.pdf"),
        ("marketing%20budget%20board%20decision", "budget.xlsx"),
    ] {
        let answer = server.get(&format!(
            "/v1/search?q={query}&k=1&level=source&tenant={}",
            env.tenant
        ));
        assert_eq!(answer["results"][0]["source_id"], source, "{answer}");
    }
}
