//! Two pipelines of different topic prefixes (say production and an evaluation) share one
//! Neo4j and one LanceDB folder: each one's reconciliation and rebuild touch only its own view,
//! so neither deletes the other's graph or rows.

use epigraph_tests::{TestEnv, neo4j, neo4j_count, serial};

const NODES: &str = "MATCH (n:Node {tenant: $tenant}) RETURN count(n) AS n";

async fn lance_rows(env: &TestEnv) -> usize {
    let filter = format!("tenant = '{}'", env.tenant);
    env.lance().await.count(Some(filter)).await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn pipelines_of_different_prefixes_keep_out_of_each_others_views() {
    let _guard = serial().await;
    let first = TestEnv::new("viewa");
    let second = TestEnv::new("viewb");
    std::fs::write(
        first.docs().join("a.md"),
        "# Atlas\n\nWe decided to ship Project Atlas in June.\n",
    )
    .unwrap();
    std::fs::write(
        second.docs().join("b.md"),
        "# Nimbus\n\nProject Nimbus must not exceed $40K per month.\n",
    )
    .unwrap();
    first.ingest_docs();
    first.run_until_idle();
    let graph = neo4j();
    let nodes = neo4j_count(&graph, NODES, &first.tenant).await;
    let rows = lance_rows(&first).await;
    assert!(nodes > 0 && rows > 0, "{nodes} nodes, {rows} rows");
    let views = neo4j_count(
        &graph,
        "MATCH (n:Node {tenant: $tenant}) WHERE n.view = 'epigraph-test.' + $tenant RETURN count(n) AS n",
        &first.tenant,
    )
    .await;
    assert_eq!(views, nodes, "every node carries its view");

    // The second pipeline's run reconciles its own (other) view, then rebuilds it — writing
    // its epochs in many small transactions (3 rows each) rather than one.
    second.ingest_docs();
    let small = |args: &[&str]| {
        let output = second
            .command(args)
            .env("EPIGRAPH_NEO4J__BATCH_ROWS", "3")
            .env("EPIGRAPH_NEO4J__TRANSACTION_ROWS", "3")
            .output()
            .expect("epigraph");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    small(&["run", "--until-idle"]);
    let written = neo4j_count(&graph, NODES, &second.tenant).await;
    assert!(written > 3, "{written}");
    small(&["rebuild"]);
    assert_eq!(neo4j_count(&graph, NODES, &second.tenant).await, written);

    assert_eq!(neo4j_count(&graph, NODES, &first.tenant).await, nodes);
    assert_eq!(lance_rows(&first).await, rows);
}
