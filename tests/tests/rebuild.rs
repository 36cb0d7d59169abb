//! `epigraph rebuild`: the views are thrown away and restored from the compacted topics. A
//! tampered node that reconciliation cannot see (its content hash still matches) is repaired;
//! the rebuilt graph and table equal what the run wrote.

use epigraph_tests::{TestEnv, last_json_line, neo4j, neo4j_count, neo4j_memory_texts, serial};

/// The tenant's rows in LanceDB.
async fn lance_rows(env: &TestEnv) -> usize {
    let filter = format!("tenant = '{}'", env.tenant);
    env.lance().await.count(Some(filter)).await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn rebuild_restores_both_views_from_the_record() {
    let _guard = serial().await;
    let env = TestEnv::new("rebuild");
    let tenant = env.tenant.clone();
    std::fs::write(
        env.docs().join("a.md"),
        "# Atlas\n\nWe decided to ship Project Atlas in June.\n\nWho owns the Atlas budget?\n",
    )
    .unwrap();
    std::fs::write(
        env.docs().join("b.md"),
        "# Nimbus\n\nProject Nimbus must not exceed $40K per month.\n",
    )
    .unwrap();
    env.ingest_docs();
    let report = env.run_until_idle();
    assert_eq!(report["dead_lettered"], 0, "{report}");
    let graph = neo4j();
    let texts = neo4j_memory_texts(&graph, &tenant).await;
    assert_eq!(texts.len(), 3, "{texts:?}");
    let nodes = "MATCH (n:Node {tenant: $tenant}) RETURN count(n) AS n";
    let before = neo4j_count(&graph, nodes, &tenant).await;
    assert_eq!(lance_rows(&env).await, 3);

    // Tamper with a node behind the pipeline's back: its content hash still matches, so a
    // normal run (which trusts hashes) leaves it.
    graph
        .run(
            neo4rs::query("MATCH (m:Memory {tenant: $tenant}) SET m.text = 'tampered'")
                .param("tenant", tenant.as_str()),
        )
        .await
        .unwrap();
    env.run_until_idle();
    assert!(
        neo4j_memory_texts(&graph, &tenant)
            .await
            .iter()
            .all(|t| t == "tampered")
    );

    let out = env.epigraph(&["rebuild", "--tenant", &tenant]);
    let report = last_json_line(&out);
    assert_eq!(report["cleared_nodes"], before, "{report}");
    assert_eq!(
        neo4j_memory_texts(&graph, &tenant).await,
        texts,
        "rebuilt from the record"
    );
    assert_eq!(neo4j_count(&graph, nodes, &tenant).await, before);
    assert_eq!(lance_rows(&env).await, 3);
    let k = neo4j_count(
        &graph,
        "MATCH (m:Memory {tenant: $tenant}) WHERE m.k IS NOT NULL RETURN count(m) AS n",
        &tenant,
    )
    .await;
    assert_eq!(k, 3, "priorities are rebuilt too");
}
