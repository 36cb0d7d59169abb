//! Supersession, contradiction, answers and reviewer verdicts through the whole path (events →
//! Kafka → run → Neo4j), with the verdicts arriving on the feedback topic: a `same` verdict
//! joins two projects (their budgets now contradict each other), withdrawing it restores the
//! graph, and a malformed feedback record is dead-lettered without stopping the run.

use epigraph_sources::kafka::EventProducer;
use epigraph_tests::corpus::{DAY, MEMO, PLANNED, SHEET, SLIPPED, T0, authored as event};
use epigraph_tests::{
    TestEnv, find_dead_letter, ingest, last_json_line, neo4j, neo4j_count, serial,
};

async fn count(cypher: &str, tenant: &str) -> i64 {
    neo4j_count(&neo4j(), cypher, tenant).await
}

async fn property(cypher: &str, tenant: &str, text: &str) -> (String, Option<i64>) {
    let mut rows = neo4j()
        .execute(
            neo4rs::query(cypher)
                .param("tenant", tenant)
                .param("text", text),
        )
        .await
        .expect("neo4j query");
    let row = rows.next().await.expect("row").expect("one row");
    (
        row.get::<String>("standing").expect("standing"),
        row.get::<Option<i64>>("t_invalid").expect("t_invalid"),
    )
}

async fn entity_id(tenant: &str, name: &str) -> String {
    let mut rows = neo4j()
        .execute(
            neo4rs::query(
                "MATCH (e:Entity:Project {tenant: $tenant}) WHERE $name IN e.aliases \
                 RETURN e.id AS id",
            )
            .param("tenant", tenant)
            .param("name", name),
        )
        .await
        .expect("neo4j query");
    let row = rows.next().await.expect("row").expect("the entity exists");
    row.get::<String>("id").expect("id")
}

const CONTRADICTS: &str =
    "MATCH (:Memory {tenant: $tenant})-[r:CONTRADICTS]->(:Memory) RETURN count(r) AS n";

#[tokio::test(flavor = "multi_thread")]
async fn judged_edges_and_feedback_verdicts_reach_neo4j() {
    let _guard = serial().await;
    let env = TestEnv::new("epistemics");
    let tenant = env.tenant.clone();
    let lines = [
        event("document", "term-sheet", 0, SHEET, None),
        event("email", "memo", 2, MEMO, None),
        event("chat", "atlas/1", 0, PLANNED, None),
        event("chat", "atlas/2", 8, SLIPPED, None),
        event("chat", "q", 1, "Who owns the BlueWave renewal?", None),
        // A third source naming BlueWave makes the recurring name an entity.
        event("chat", "x", 2, "The BlueWave renewal call went long.", None),
        event(
            "chat",
            "a",
            4,
            "Mateo Rossi will own the BlueWave renewal.",
            Some("Mateo Rossi"),
        ),
        event(
            "document",
            "atlas-budget",
            3,
            "The Project Atlas budget is $450K for the year.",
            None,
        ),
        event(
            "email",
            "nimbus-budget",
            5,
            "Finance puts the Project Nimbus budget at $570K.",
            None,
        ),
    ];
    let file = env.dir.path().join("events.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let summary = ingest(&env, &["events", file.to_str().unwrap()]);
    assert_eq!(summary["published"], 9, "{summary}");
    let report = env.run_until_idle();
    assert_eq!(report["dead_lettered"], 0, "{report}");

    assert_eq!(
        count(CONTRADICTS, &tenant).await,
        2,
        "the sheet and the memo, each way"
    );
    let superseded = count(
        "MATCH (n:Memory {tenant: $tenant})-[r:SUPERSEDES]->(o:Memory) \
         WHERE r.t_valid = o.t_invalid AND r.recorded_at IS NOT NULL RETURN count(r) AS n",
        &tenant,
    )
    .await;
    assert_eq!(
        superseded, 1,
        "the slip supersedes the plan, valid from the slip"
    );
    let by_text = "MATCH (m:Memory {tenant: $tenant, text: $text}) \
                   RETURN m.standing AS standing, m.t_invalid AS t_invalid";
    assert_eq!(
        property(by_text, &tenant, PLANNED).await,
        ("superseded".into(), Some(T0 + 8 * DAY))
    );
    assert_eq!(
        property(by_text, &tenant, SLIPPED).await,
        ("current".into(), None)
    );
    assert_eq!(
        property(by_text, &tenant, "Who owns the BlueWave renewal?").await,
        ("answered".into(), Some(T0 + 4 * DAY))
    );
    assert_eq!(
        count(
            "MATCH (:Memory {tenant: $tenant})-[r:ANSWERS]->(:Memory) RETURN count(r) AS n",
            &tenant
        )
        .await,
        1
    );
    let claims_superseded = count(
        "MATCH (c:Claim {tenant: $tenant, standing: 'superseded'}) RETURN count(c) AS n",
        &tenant,
    )
    .await;
    assert_eq!(claims_superseded, 1, "the planned launch date");

    // Every memory node has its priority K and the terms it is made of; the superseded plan
    // ranks below the slip that replaced it.
    let without_k = count(
        "MATCH (m:Memory {tenant: $tenant}) WHERE m.k IS NULL OR m.k < 0.0 OR m.k > 1.0 \
         OR m.k_s IS NULL OR m.k_c IS NULL OR m.priority_hash IS NULL RETURN count(m) AS n",
        &tenant,
    )
    .await;
    assert_eq!(without_k, 0);
    let demoted = count(
        "MATCH (new:Memory {tenant: $tenant})-[:SUPERSEDES]->(old:Memory) \
         WHERE old.k < new.k AND old.k_c > 0.0 RETURN count(old) AS n",
        &tenant,
    )
    .await;
    assert_eq!(
        demoted, 1,
        "the superseded plan pays the demotion and ranks lower"
    );

    // A search reports its results as retrievals; the next run counts them in the usage term.
    let server = env.serve();
    let found = server.get(&format!(
        "/v1/search?q=Atlas+launch&k=2&mode=text&tenant={tenant}"
    ));
    let returned = found["results"].as_array().expect("results").len();
    assert!(returned >= 1, "{found}");
    // Reports are published in the background: give them a moment before stopping the server.
    std::thread::sleep(std::time::Duration::from_secs(3));
    drop(server);
    let report = env.run_until_idle();
    assert_eq!(report["usage_records"], returned, "{report}");
    let used = count(
        "MATCH (m:Memory {tenant: $tenant}) WHERE m.k_u > 0.0 RETURN count(m) AS n",
        &tenant,
    )
    .await;
    assert_eq!(
        used as usize, returned,
        "each retrieved node has a usage term"
    );

    // A reviewer says the two projects are one: their budgets now contradict each other.
    let atlas = entity_id(&tenant, "Atlas").await;
    let nimbus = entity_id(&tenant, "Nimbus").await;
    let out = env.epigraph(&["feedback", "same", &atlas, &nimbus, "--tenant", &tenant]);
    assert!(out.contains("published"), "{out}");
    let report = env.run_until_idle();
    assert_eq!(report["verdicts"], 1, "{report}");
    assert_eq!(count(CONTRADICTS, &tenant).await, 4);
    assert_eq!(
        count(
            "MATCH (:Entity {tenant: $tenant})-[r:SAME_AS]->(:Entity) RETURN count(r) AS n",
            &tenant
        )
        .await,
        1
    );

    // Withdrawn: back to the state before, in the graph and after a restart.
    env.epigraph(&["feedback", "withdraw", &atlas, &nimbus, "--tenant", &tenant]);
    let report = env.run_until_idle();
    assert_eq!(report["verdicts"], 0, "{report}");
    assert_eq!(count(CONTRADICTS, &tenant).await, 2);
    assert_eq!(
        count(
            "MATCH (:Entity {tenant: $tenant})-[r:SAME_AS]->(:Entity) RETURN count(r) AS n",
            &tenant
        )
        .await,
        0
    );

    // A malformed feedback record is dead-lettered with its reason; the run carries on.
    let producer = EventProducer::new(&env.kafka).unwrap();
    let key = format!("{tenant}/identity/x/y");
    producer
        .publish_raw(
            &env.kafka.feedback_topic(),
            &key,
            br#"{"kind":"identity","verdict":"maybe"}"#,
        )
        .await
        .unwrap();
    producer.flush().unwrap();
    let report = last_json_line(&env.epigraph(&["run", "--until-idle"]));
    assert_eq!(report["dead_lettered"], 1, "{report}");
    let letter = find_dead_letter(&env, "the bad feedback record", |l| {
        l.reason.contains("not a feedback record")
    })
    .await;
    assert_eq!(letter.tenant.as_deref(), Some(tenant.as_str()));
    assert_eq!(count(CONTRADICTS, &tenant).await, 2, "nothing else changed");
}
