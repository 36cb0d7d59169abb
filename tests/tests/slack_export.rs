//! A real Slack export (tests/fixtures/slack-export, from hfaran/slack-export-viewer, MIT)
//! through the whole path: connector → Kafka → run → Neo4j + LanceDB → search.

use std::path::PathBuf;

use epigraph_tests::{TestEnv, ingest, neo4j, neo4j_count, serial};

fn fixture() -> PathBuf {
    let path = epigraph_schemas::manifest_dir!().join("fixtures/slack-export");
    assert!(
        path.is_dir(),
        "{} is missing (the fixtures are part of the repository: tests/fixtures)",
        path.display()
    );
    path
}

#[tokio::test(flavor = "multi_thread")]
async fn a_real_slack_export_lands_in_both_stores() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-slack");
    let summary = ingest(&env, &["slack", fixture().to_str().unwrap()]);
    assert_eq!(
        (
            summary["published"].as_u64(),
            summary["dead_lettered"].as_u64()
        ),
        (Some(158), Some(0)),
        "{summary}"
    );
    let again = ingest(&env, &["slack", fixture().to_str().unwrap()]);
    assert_eq!(
        (again["published"].as_u64(), again["unchanged"].as_u64()),
        (Some(0), Some(158)),
        "a second ingest of the same export publishes nothing: {again}"
    );
    env.run_until_idle();

    let graph = neo4j();
    let chats = neo4j_count(
        &graph,
        "MATCH (s:Source:Chat {tenant: $tenant}) RETURN count(s) AS n",
        &env.tenant,
    )
    .await;
    assert_eq!(chats, 158);
    let lance = env.lance().await;
    let rows = lance
        .count(Some(format!("tenant = '{}'", env.tenant)))
        .await
        .unwrap();
    assert!(
        (60..=600).contains(&rows),
        "one memory row per sentence of the messages that are not noise: {rows}"
    );
    // The export's users are people who wrote messages.
    let authors = neo4j_count(
        &graph,
        "MATCH (p:Entity:Person {tenant: $tenant})-[:AUTHORED]->(:Source:Chat) \
         RETURN count(DISTINCT p) AS n",
        &env.tenant,
    )
    .await;
    assert!(authors >= 3, "people authoring messages: {authors}");
    let typed = neo4j_count(
        &graph,
        "MATCH (m:Memory:Question {tenant: $tenant})-[:DERIVED_FROM]->(:Source:Chat) \
         RETURN count(m) AS n",
        &env.tenant,
    )
    .await;
    assert!(typed >= 1, "questions asked in the chat: {typed}");
    let server = env.serve();
    let answer = server.get(&format!(
        "/v1/search?q=free%20world%20cities%20database&k=3&tenant={}",
        env.tenant
    ));
    let sources: Vec<&str> = answer["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["source_id"].as_str())
        .collect();
    assert!(sources.iter().all(|s| s.starts_with("slack/")), "{answer}");
    assert!(
        answer["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["snippet"].as_str().unwrap_or("").contains("world cities")),
        "{answer}"
    );
}
