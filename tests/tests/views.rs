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

const VIEW_NODES: &str =
    "MATCH (n:Node {tenant: $tenant}) WHERE n.view = $view RETURN count(n) AS n";

async fn nodes_in_view(graph: &neo4rs::Graph, tenant: &str, view: &str) -> i64 {
    let mut rows = graph
        .execute(
            neo4rs::query(VIEW_NODES)
                .param("tenant", tenant)
                .param("view", view),
        )
        .await
        .expect("neo4j query");
    let row = rows.next().await.expect("row").expect("one row");
    row.get::<i64>("n").expect("n")
}

/// The trial: the same tenant and source ids under two prefixes, one Neo4j. Node ids do
/// not include the view, so the second pipeline would take the first's nodes over; it refuses
/// instead, with the reason, at start-up — also while the first is running — and at the first
/// epoch that brings the tenant in; the first view keeps every node.
#[tokio::test(flavor = "multi_thread")]
async fn a_tenant_another_prefix_holds_is_refused_not_taken_over() {
    let _guard = serial().await;
    let first = TestEnv::new("viewc");
    let mut second = TestEnv::new("viewd");
    second.tenant = first.tenant.clone();
    let (view_a, view_b) = (
        first.kafka.topic_prefix.clone(),
        second.kafka.topic_prefix.clone(),
    );
    let note = "# Atlas\n\nWe decided to ship Project Atlas in June.\n";
    std::fs::write(first.docs().join("a.md"), note).unwrap();
    std::fs::write(second.docs().join("a.md"), note).unwrap();
    first.ingest_docs();
    first.run_until_idle();
    let graph = neo4j();
    let held = nodes_in_view(&graph, &first.tenant, &view_a).await;
    assert!(held > 0, "{held} nodes in view A");

    // The second prefix's record holds the same tenant and source: refused at start-up.
    second.ingest_docs();
    let refused = |env: &TestEnv| {
        let output = env
            .command(&["run", "--until-idle"])
            .output()
            .expect("epigraph");
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(
            !output.status.success(),
            "the run was not refused: {stderr}"
        );
        stderr
    };
    let stderr = refused(&second);
    assert!(
        stderr.contains(&format!("is already in Neo4j under view \"{view_a}\""))
            && stderr.contains(&format!("writes view \"{view_b}\"")),
        "{stderr}"
    );
    assert_eq!(nodes_in_view(&graph, &first.tenant, &view_a).await, held);
    assert_eq!(nodes_in_view(&graph, &first.tenant, &view_b).await, 0);

    // Side by side: with the first pipeline running, the second is refused again, and the
    // first goes on writing.
    let mut running = first.command(&["run"]).spawn().expect("epigraph run");
    std::thread::sleep(std::time::Duration::from_secs(3));
    refused(&second);
    std::fs::write(
        first.docs().join("b.md"),
        "# Nimbus\n\nProject Nimbus must not exceed $40K per month.\n",
    )
    .unwrap();
    first.ingest_docs();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while nodes_in_view(&graph, &first.tenant, &view_a).await <= held {
        assert!(
            std::time::Instant::now() < deadline,
            "the running pipeline wrote nothing"
        );
        if let Ok(Some(status)) = running.try_wait() {
            panic!("the first pipeline stopped: {status}");
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    let _ = running.kill();
    let _ = running.wait();
    let grown = nodes_in_view(&graph, &first.tenant, &view_a).await;
    assert_eq!(nodes_in_view(&graph, &first.tenant, &view_b).await, 0);

    // A second pipeline whose record brings the tenant in only later (it started on another
    // tenant) is refused at that epoch, before writing it.
    let mut third = TestEnv::new("viewe");
    let own = third.tenant.clone();
    std::fs::write(
        third.docs().join("c.md"),
        "# Orion\n\nOrion launches in May.\n",
    )
    .unwrap();
    third.ingest_docs();
    let mut live = third.command(&["run"]).spawn().expect("epigraph run");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while neo4j_count(&graph, NODES, &own).await == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the third pipeline wrote nothing"
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    third.tenant = first.tenant.clone();
    std::fs::write(third.docs().join("a.md"), note).unwrap();
    third.ingest_docs();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let status = loop {
        if let Ok(Some(status)) = live.try_wait() {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the epoch was not refused"
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    };
    assert!(!status.success());
    assert_eq!(nodes_in_view(&graph, &first.tenant, &view_a).await, grown);
    let view_c = third.kafka.topic_prefix.clone();
    assert_eq!(nodes_in_view(&graph, &first.tenant, &view_c).await, 0);

    // The first prefix runs again as before.
    first.run_until_idle();
    assert_eq!(nodes_in_view(&graph, &first.tenant, &view_a).await, grown);
}
