//! K's history: `epigraph run` publishes a sample whenever an epoch changes a node's K, and the
//! query service draws it (`/v1/priorities/history`) and lists the movers
//! (`/v1/priorities/movers`): a term sheet's K falls when a memo contradicting it arrives.

use epigraph_tests::corpus::{MEMO, SHEET, authored as event};
use epigraph_tests::{TestEnv, ingest, neo4j, serial};

async fn memory(tenant: &str, text: &str) -> (String, f64) {
    let mut rows = neo4j()
        .execute(
            neo4rs::query(
                "MATCH (m:Memory {tenant: $tenant, text: $text}) RETURN m.id AS id, m.k AS k",
            )
            .param("tenant", tenant)
            .param("text", text),
        )
        .await
        .expect("neo4j query");
    let row = rows.next().await.expect("row").expect("the memory object");
    (row.get("id").expect("id"), row.get("k").expect("k"))
}

fn publish(env: &TestEnv, name: &str, line: String) {
    let file = env.dir.path().join(name);
    std::fs::write(&file, line + "\n").unwrap();
    ingest(env, &["events", file.to_str().unwrap()]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_contradiction_shows_in_the_history_of_k_and_among_the_movers() {
    let _guard = serial().await;
    let env = TestEnv::new("k-history");
    let tenant = env.tenant.clone();
    publish(
        &env,
        "a.jsonl",
        event("document", "term-sheet", 0, SHEET, None),
    );
    env.run_until_idle();
    let (sheet, k_alone) = memory(&tenant, SHEET).await;
    let between = epigraph_schemas::now_millis();
    std::thread::sleep(std::time::Duration::from_millis(20));
    publish(&env, "b.jsonl", event("email", "memo", 2, MEMO, None));
    env.run_until_idle();
    let (memo, _) = memory(&tenant, MEMO).await;
    let (_, k_contradicted) = memory(&tenant, SHEET).await;
    assert!(k_contradicted < k_alone, "{k_contradicted} < {k_alone}");

    let server = env.serve();
    let mut history = serde_json::Value::Null;
    for _ in 0..50 {
        history = server.get(&format!(
            "/v1/priorities/history?tenant={tenant}&node={sheet}"
        ));
        if history["samples"].as_array().is_some_and(|s| s.len() >= 2) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let samples = history["samples"].as_array().expect("samples");
    assert_eq!(samples.len(), 2, "{history}");
    let k = |i: usize| samples[i]["k"].as_f64().unwrap();
    assert!((k(0) - k_alone).abs() < 1e-6, "{history}");
    assert!((k(1) - k_contradicted).abs() < 1e-6, "{history}");
    assert!(
        samples[1]["terms"]["c"].as_f64().unwrap() > 0.0,
        "the penalty"
    );
    assert!(samples[0]["at"].as_i64() < samples[1]["at"].as_i64());
    // Each sample records K before the clamps too (which orders nodes at a bound as of an
    // instant): K is that value clamped to [0, 1].
    for (i, sample) in samples.iter().enumerate() {
        let unclamped = sample["terms"]["unclamped"]
            .as_f64()
            .unwrap_or_else(|| panic!("sample {i} has the value before the clamp: {history}"));
        assert!(
            (unclamped.clamp(0.0, 1.0) - k(i)).abs() < 1e-6,
            "{unclamped} clamped is K: {history}"
        );
    }

    let movers = server.get(&format!(
        "/v1/priorities/movers?tenant={tenant}&since={between}"
    ));
    let ids = |side: &str| -> Vec<String> {
        movers[side]
            .as_array()
            .expect("list")
            .iter()
            .map(|m| m["node"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(ids("fallers").contains(&sheet), "{movers}");
    assert!(ids("risers").contains(&memo), "new since: {movers}");
    assert_eq!(movers["fallers"][0]["card"]["text"], SHEET, "{movers}");

    // Priorities as of the instant between the two runs: the sheet ranked by K then (before
    // the memo contradicted it); the memo, valid then by its date but without K recorded then,
    // by its K now (no entry in k_as_of).
    let then = server.get(&format!(
        "/v1/priorities?tenant={tenant}&top=50&as_of={between}"
    ));
    assert_eq!(then["as_of"].as_i64(), Some(between), "{then}");
    let k_then = then["k_as_of"][&sheet]
        .as_f64()
        .expect("the sheet's K then");
    assert!((k_then - k_alone).abs() < 1e-6, "{then}");
    assert!(then["k_as_of"].get(&memo).is_none(), "{then}");
    let listed: Vec<&str> = then["priorities"]
        .as_array()
        .expect("priorities")
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert!(
        listed.contains(&sheet.as_str()) && listed.contains(&memo.as_str()),
        "{then}"
    );
    // Now: ranked by K now, no k_as_of.
    let now = server.get(&format!("/v1/priorities?tenant={tenant}&top=50"));
    assert!(
        now.get("k_as_of").is_none() && now.get("as_of").is_none(),
        "{now}"
    );
    // Before the sheet was written (day −1): nothing was valid then.
    let before = server.get(&format!(
        "/v1/priorities?tenant={tenant}&top=50&as_of={}",
        epigraph_tests::corpus::T0 - 86_400_000
    ));
    assert_eq!(
        before["priorities"].as_array().map(Vec::len),
        Some(0),
        "{before}"
    );

    let (status, _) = epigraph_tests::http_get(&format!(
        "{}/v1/priorities/movers?tenant={tenant}&since=yesterday-ish",
        server.base
    ))
    .expect("answer");
    assert_eq!(status, 400);
}
