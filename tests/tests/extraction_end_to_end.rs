//! A generated organisation through the whole path (gen → ingest events → Kafka → run →
//! Neo4j): the graph holds exactly what the extraction operator computes offline from the same
//! events — memory objects by type, entities by kind, claims, sources and every relationship
//! type — and a second run changes nothing.

use std::collections::BTreeMap;

use differential_dataflow::input::Input;
use epigraph_operators::{Extractor, GraphElement, SourceVersion, extract_graph};
use epigraph_tests::{TestEnv, ingest, last_json_line, neo4j, serial};
use timely::dataflow::operators::capture::{Capture, Extract};

/// The live source versions at the end of a generated `events.jsonl`, as the pipeline sees them.
fn live_versions(events: &str, tenant: &str) -> Vec<SourceVersion> {
    let mut live: BTreeMap<String, Option<SourceVersion>> = BTreeMap::new();
    for line in events.lines() {
        let event = epigraph::serve::webhook::parse_event(line.as_bytes(), tenant, 0)
            .expect("generated lines are valid");
        let version =
            (event.op == epigraph_schemas::Op::Upsert).then(|| SourceVersion::from_event(&event));
        live.insert(event.source_id.clone(), version);
    }
    live.into_values().flatten().collect()
}

/// Counts per label or relationship type of the extraction dataflow's output.
fn expected_counts(versions: Vec<SourceVersion>) -> BTreeMap<String, i64> {
    let captured = timely::execute_directly(move |worker| {
        let (mut input, captured) = worker.dataflow::<u64, _, _>(|scope| {
            let (input, docs) = scope.new_collection::<SourceVersion, isize>();
            let out = extract_graph(docs, std::sync::Arc::new(Extractor::bundled()));
            (input, out.consolidate().inner.capture())
        });
        for version in versions {
            input.insert(version);
        }
        input.close();
        while worker.step() {}
        captured
    });
    let mut counts = BTreeMap::new();
    for (_, updates) in captured.extract() {
        for (element, _, diff) in updates {
            let key = match &element {
                GraphElement::Source(_) => "Source".to_string(),
                GraphElement::Memory(m) => format!("Memory:{}", m.memory_type.label()),
                GraphElement::Entity(e) => format!("Entity:{}", e.kind),
                GraphElement::Claim(_) => "Claim".to_string(),
                GraphElement::Relation(r) => format!("-[{}]->", r.rel_type),
                GraphElement::Priority(_) => continue,
            };
            *counts.entry(key).or_default() += diff as i64;
        }
    }
    counts.retain(|_, n| *n != 0);
    counts
}

/// The same counts read back from Neo4j for one tenant.
async fn graph_counts(tenant: &str) -> BTreeMap<String, i64> {
    let graph = neo4j();
    let mut counts = BTreeMap::new();
    let node_query = "MATCH (n:Node {tenant: $tenant}) \
        WITH n, [l IN labels(n) WHERE l <> 'Node'] AS ls \
        WITH CASE WHEN 'Source' IN ls THEN 'Source' \
             WHEN 'Claim' IN ls THEN 'Claim' \
             WHEN 'Memory' IN ls THEN 'Memory:' + [l IN ls WHERE l <> 'Memory'][0] \
             ELSE 'Entity:' + n.kind END AS key \
        RETURN key, count(*) AS n";
    let relation_query = "MATCH (:Node)-[r {tenant: $tenant}]->(:Node) \
        RETURN '-[' + type(r) + ']->' AS key, count(r) AS n";
    for cypher in [node_query, relation_query] {
        let mut rows = graph
            .execute(neo4rs::query(cypher).param("tenant", tenant))
            .await
            .expect("neo4j query");
        while let Some(row) = rows.next().await.expect("row") {
            counts.insert(
                row.get::<String>("key").unwrap(),
                row.get::<i64>("n").unwrap(),
            );
        }
    }
    counts
}

#[tokio::test(flavor = "multi_thread")]
async fn the_graph_holds_exactly_what_the_extraction_operator_computes() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-extract");
    let corpus = env.dir.path().join("corpus");
    env.epigraph(&[
        "gen",
        corpus.to_str().unwrap(),
        "--seed",
        "11",
        "--scale",
        "250",
    ]);
    let events = std::fs::read_to_string(corpus.join("events.jsonl")).unwrap();
    ingest(
        &env,
        &["events", corpus.join("events.jsonl").to_str().unwrap()],
    );
    // Vectors are not what this test checks: skip the embedder to keep it fast.
    let config = env.dir.path().join("no-embed.toml");
    std::fs::write(&config, "[lancedb]\nembed = false\n").unwrap();
    let config = config.to_str().unwrap();
    env.epigraph(&["--config", config, "run", "--until-idle"]);

    let expected = expected_counts(live_versions(&events, &env.tenant));
    for key in [
        "Source",
        "Claim",
        "Memory:Decision",
        "Memory:Question",
        "Entity:Person",
    ] {
        assert!(
            expected.get(key).is_some_and(|n| *n > 0),
            "{key}: {expected:?}"
        );
    }
    for rel in [
        "-[MENTIONS]->",
        "-[AUTHORED]->",
        "-[ASSERTS]->",
        "-[DERIVED_FROM]->",
    ] {
        assert!(expected.contains_key(rel), "{rel}: {expected:?}");
    }
    assert_eq!(graph_counts(&env.tenant).await, expected);

    let memories = expected
        .iter()
        .filter(|(k, _)| k.starts_with("Memory:"))
        .map(|(_, n)| *n as u64)
        .sum::<u64>();
    let lance = env.lance().await;
    let rows = lance
        .count(Some(format!("tenant = '{}'", env.tenant)))
        .await
        .unwrap();
    assert_eq!(rows as u64, memories, "one LanceDB row per memory object");

    let report = last_json_line(&env.epigraph(&["--config", config, "run", "--until-idle"]));
    assert_eq!(graph_counts(&env.tenant).await, expected, "{report}");
}

/// `(labels, text or name, K)` of every node of a tenant, sorted: what two runs over the same
/// corpus must agree on (ids differ between tenants).
async fn node_fingerprints(tenant: &str) -> Vec<String> {
    let graph = neo4j();
    let mut rows = graph
        .execute(
            neo4rs::query(
                "MATCH (n:Node {tenant: $tenant}) \
                 RETURN labels(n) AS labels, \
                        coalesce(n.text, n.name, n.title, '') AS label, \
                        coalesce(n.k, -1.0) AS k",
            )
            .param("tenant", tenant),
        )
        .await
        .expect("neo4j query");
    let mut out = Vec::new();
    while let Some(row) = rows.next().await.expect("row") {
        let mut labels = row.get::<Vec<String>>("labels").unwrap();
        labels.sort();
        out.push(format!(
            "{} {} {:.6}",
            labels.join(":"),
            row.get::<String>("label").unwrap(),
            row.get::<f64>("k").unwrap()
        ));
    }
    out.sort();
    out
}

/// Two free local ports for a two-process cluster.
fn two_addresses() -> String {
    let listeners: Vec<std::net::TcpListener> = (0..2)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    listeners
        .iter()
        .map(|l| l.local_addr().unwrap().to_string())
        .collect::<Vec<_>>()
        .join(",")
}

#[tokio::test(flavor = "multi_thread")]
async fn two_processes_write_the_graph_one_process_does() {
    let _serial = serial().await;
    let single = TestEnv::new("e2e-single");
    let cluster = TestEnv::new("e2e-cluster");
    let corpus = single.dir.path().join("corpus");
    single.epigraph(&[
        "gen",
        corpus.to_str().unwrap(),
        "--seed",
        "13",
        "--scale",
        "150",
    ]);
    let events = corpus.join("events.jsonl");
    let config = single.dir.path().join("no-embed.toml");
    std::fs::write(&config, "[lancedb]\nembed = false\n").unwrap();
    let config = config.to_str().unwrap();
    for env in [&single, &cluster] {
        ingest(env, &["events", events.to_str().unwrap()]);
    }
    single.epigraph(&["--config", config, "run", "--until-idle"]);

    let addresses = two_addresses();
    let peer = cluster
        .command(&[
            "--config",
            config,
            "run",
            "--cluster",
            &addresses,
            "--process",
            "1",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawning the peer");
    let report = last_json_line(&cluster.epigraph(&[
        "--config",
        config,
        "run",
        "--until-idle",
        "--cluster",
        &addresses,
        "--process",
        "0",
    ]));
    let peer = peer
        .wait_with_output()
        .expect("the peer ends with the driver");
    assert!(
        peer.status.success(),
        "peer: {}\n{}",
        String::from_utf8_lossy(&peer.stdout),
        String::from_utf8_lossy(&peer.stderr)
    );
    assert!(report["live_sources"].as_u64().unwrap() > 50, "{report}");

    let expected = graph_counts(&single.tenant).await;
    assert!(expected.get("Memory:Decision").is_some_and(|n| *n > 0));
    assert_eq!(graph_counts(&cluster.tenant).await, expected);
    let (one, two) = (
        node_fingerprints(&single.tenant).await,
        node_fingerprints(&cluster.tenant).await,
    );
    assert!(one.iter().any(|n| !n.ends_with("-1.000000")), "K was set");
    assert_eq!(one, two, "the same nodes, texts and K");
}
