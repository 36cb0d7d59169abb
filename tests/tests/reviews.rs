//! Review actions through the whole path: a reviewer rejects a contradiction and a supersession
//! through `POST /v1/reviews`, the pipeline retracts them (and the superseded plan is current
//! again) in Neo4j and in `/v1/contradictions`; withdrawing a rejection brings the pair back, a
//! confirmation marks it, and both hold across `epigraph rebuild` and a restarted server.

use epigraph_tests::corpus::{MEMO, PLANNED, SHEET, SLIPPED, authored as event};
use epigraph_tests::{TestEnv, http_delete, http_post, ingest, neo4j, neo4j_count, serial};

async fn count(cypher: &str, tenant: &str) -> i64 {
    neo4j_count(&neo4j(), cypher, tenant).await
}

const CONTRADICTS: &str =
    "MATCH (:Memory {tenant: $tenant})-[r:CONTRADICTS]->(:Memory) RETURN count(r) AS n";
const CONFIRMED: &str = "MATCH (:Memory {tenant: $tenant})-[r:CONTRADICTS]->(:Memory) \
                         WHERE r.review = 'confirmed' RETURN count(r) AS n";
const SUPERSEDES: &str =
    "MATCH (:Memory {tenant: $tenant})-[r:SUPERSEDES]->(:Memory) RETURN count(r) AS n";
const PLAN_CURRENT: &str = "MATCH (m:Memory {tenant: $tenant}) \
    WHERE m.text STARTS WITH 'Project Atlas launch is planned' AND m.standing = 'current' \
    RETURN count(m) AS n";

async fn memory_id(tenant: &str, text: &str) -> String {
    let mut rows = neo4j()
        .execute(
            neo4rs::query("MATCH (m:Memory {tenant: $tenant, text: $text}) RETURN m.id AS id")
                .param("tenant", tenant)
                .param("text", text),
        )
        .await
        .expect("neo4j query");
    let row = rows.next().await.expect("row").expect("the memory object");
    row.get::<String>("id").expect("id")
}

fn review(relation: &str, from: &str, to: &str, verdict: &str) -> String {
    serde_json::json!({
        "relation": relation, "from": from, "to": to, "verdict": verdict,
        "reason": "the memo is a draft", "by": "analyst@example.org",
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn rejected_judgements_leave_the_graph_and_stay_rejected_across_a_rebuild() {
    let _guard = serial().await;
    let env = TestEnv::new("reviews");
    let tenant = env.tenant.clone();
    let lines = [
        event("document", "term-sheet", 0, SHEET, None),
        event("email", "memo", 2, MEMO, None),
        event("chat", "atlas/1", 0, PLANNED, None),
        event("chat", "atlas/2", 8, SLIPPED, None),
    ];
    let file = env.dir.path().join("events.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    ingest(&env, &["events", file.to_str().unwrap()]);
    env.run_until_idle();
    assert_eq!(count(CONTRADICTS, &tenant).await, 2, "the pair, each way");
    assert_eq!(count(SUPERSEDES, &tenant).await, 1);
    assert_eq!(
        count(PLAN_CURRENT, &tenant).await,
        0,
        "the plan is superseded"
    );

    let server = env.serve();
    let url = format!("{}/v1/reviews?tenant={tenant}", server.base);
    let pairs = server.get(&format!("/v1/contradictions?tenant={tenant}"));
    let pair = &pairs["contradictions"][0];
    let (a, b) = (
        pair["a"]["id"].as_str().unwrap().to_string(),
        pair["b"]["id"].as_str().unwrap().to_string(),
    );
    let (plan, slip) = (
        memory_id(&tenant, PLANNED).await,
        memory_id(&tenant, SLIPPED).await,
    );

    // Wrong requests are refused with the reason, and publish nothing.
    let (status, body) = http_post(&url, None, &review("MENTIONS", &a, &b, "reject"));
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("MENTIONS")
    );
    let (status, body) = http_post(&url, None, &review("SUPERSEDES", &a, &b, "reject"));
    assert_eq!(status, 404, "no such edge: {body}");
    let (status, _) = http_post(&url, None, &review("CONTRADICTS", &a, &a, "reject"));
    assert_eq!(status, 400, "a statement with itself");

    // Reject the contradiction (written the other way round) and the supersession.
    let (status, receipt) = http_post(&url, None, &review("CONTRADICTS", &b, &a, "reject"));
    assert_eq!(status, 202, "{receipt}");
    assert_eq!(receipt["review"]["by"], "analyst@example.org");
    let (status, _) = http_post(&url, None, &review("SUPERSEDES", &slip, &plan, "reject"));
    assert_eq!(status, 202);
    let listed = server.get(&format!("/v1/reviews?tenant={tenant}"));
    assert_eq!(listed["reviews"].as_array().unwrap().len(), 2, "{listed}");

    let report = env.run_until_idle();
    assert_eq!(report["reviews"], 2, "{report}");
    assert_eq!(count(CONTRADICTS, &tenant).await, 0, "rejected");
    assert_eq!(count(SUPERSEDES, &tenant).await, 0, "rejected");
    assert_eq!(
        count(PLAN_CURRENT, &tenant).await,
        1,
        "the plan is current again"
    );
    let pairs = server.get(&format!("/v1/contradictions?tenant={tenant}"));
    assert_eq!(
        pairs["contradictions"].as_array().unwrap().len(),
        0,
        "{pairs}"
    );

    // Withdrawing the rejection brings the pair back; confirming it marks both edges.
    let (status, _) = http_delete(&format!("{url}&relation=CONTRADICTS&from={a}&to={b}"), None);
    assert_eq!(status, 202);
    env.run_until_idle();
    assert_eq!(count(CONTRADICTS, &tenant).await, 2, "withdrawn");
    let (status, _) = http_post(&url, None, &review("CONTRADICTS", &a, &b, "confirm"));
    assert_eq!(status, 202);
    env.run_until_idle();
    assert_eq!(count(CONFIRMED, &tenant).await, 2, "confirmed, each way");
    drop(server);

    // The reviews are replayed from the feedback topic: a rebuild keeps them.
    env.epigraph(&["rebuild", "--tenant", &tenant]);
    assert_eq!(count(CONFIRMED, &tenant).await, 2);
    assert_eq!(count(SUPERSEDES, &tenant).await, 0, "still rejected");
    assert_eq!(count(PLAN_CURRENT, &tenant).await, 1);

    // A new server lists them from the topic.
    let server = env.serve();
    let mut listed = serde_json::Value::Null;
    for _ in 0..50 {
        listed = server.get(&format!("/v1/reviews?tenant={tenant}"));
        if listed["reviews"].as_array().is_some_and(|r| r.len() == 2) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let verdicts: Vec<(&str, &str)> = listed["reviews"]
        .as_array()
        .expect("reviews")
        .iter()
        .map(|r| {
            (
                r["relation"].as_str().unwrap(),
                r["verdict"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(verdicts.len(), 2, "{listed}");
    assert!(verdicts.contains(&("CONTRADICTS", "confirm")), "{listed}");
    assert!(verdicts.contains(&("SUPERSEDES", "reject")), "{listed}");
}

/// Review keys escape their ids since session 27 (`a/b` + `c` and `a` + `b/c` had one key
/// before). A review written before, under its old key, still holds, is listed, and is gone when
/// withdrawn through the API: the query service tombstones the old key too.
#[tokio::test(flavor = "multi_thread")]
async fn a_review_under_its_key_of_before_ids_were_escaped_still_holds_and_can_be_withdrawn() {
    use epigraph_schemas::feedback::{Feedback, Judged, ReviewVerdict};
    let _guard = serial().await;
    let env = TestEnv::new("reviewkeys");
    let tenant = env.tenant.clone();
    let file = env.dir.path().join("events.jsonl");
    std::fs::write(&file, event("chat", "atlas/1", 0, PLANNED, None) + "\n").unwrap();
    ingest(&env, &["events", file.to_str().unwrap()]);
    env.run_until_idle();

    let record = Feedback::Review {
        tenant: tenant.clone(),
        relation: Judged::Supersedes,
        from: "docs/adr-004".into(),
        to: "docs/adr-001".into(),
        verdict: ReviewVerdict::Reject,
        reason: Some("written by session 26".into()),
        by: None,
        at: Some(1),
    };
    let legacy = record
        .legacy_key()
        .expect("ids with a slash had another key");
    assert_eq!(
        legacy,
        format!("{tenant}/review/SUPERSEDES/docs/adr-004/docs/adr-001")
    );
    assert_ne!(legacy, record.key());
    let producer = epigraph_sources::kafka::EventProducer::new(&env.kafka).unwrap();
    producer
        .publish_raw(
            &env.kafka.feedback_topic(),
            &legacy,
            &serde_json::to_vec(&record).unwrap(),
        )
        .await
        .unwrap();
    producer.flush().unwrap();
    let report = env.run_until_idle();
    assert_eq!(
        (report["reviews"].as_u64(), report["dead_lettered"].as_u64()),
        (Some(1), Some(0)),
        "accepted under its old key: {report}"
    );

    let server = env.serve();
    let listed = |server: &epigraph_tests::Server| {
        server.get(&format!("/v1/reviews?tenant={tenant}"))["reviews"]
            .as_array()
            .map_or(0, Vec::len)
    };
    let mut seen = 0;
    for _ in 0..50 {
        seen = listed(&server);
        if seen == 1 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert_eq!(seen, 1, "the server lists it from the topic");
    let (status, receipt) = http_delete(
        &format!(
            "{}/v1/reviews?tenant={tenant}&relation=SUPERSEDES&from=docs%2Fadr-004&to=docs%2Fadr-001",
            server.base
        ),
        None,
    );
    assert_eq!(status, 202, "{receipt}");
    assert_eq!(receipt["key"], record.key().as_str(), "{receipt}");
    assert_eq!(listed(&server), 0, "withdrawn");
    drop(server);
    // The pipeline reads the whole topic again: the old key is tombstoned there.
    let report = env.run_until_idle();
    assert_eq!(
        (report["reviews"].as_u64(), report["dead_lettered"].as_u64()),
        (Some(0), Some(0)),
        "{report}"
    );
}
