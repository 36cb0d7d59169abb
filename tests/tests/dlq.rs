//! `epigraph dlq list|show|replay` against the real Kafka and Neo4j: letters are listed with
//! their reasons and filtered, one is shown with its raw bytes, and a replay re-submits what
//! the validation now accepts, dead-letters again what it still refuses, leaves what it cannot
//! replay — and never duplicates: a second replay publishes nothing, a letter whose item is
//! already recorded is not republished (even when its replay mark is lost), and the graph holds
//! one copy of each item.

use epigraph_schemas::{SourceEvent, SourceKind, encode_event};
use epigraph_sources::kafka::{DeadLetter, EventProducer, ensure_topics};
use epigraph_tests::{TestEnv, last_json_line, neo4j, neo4j_count, serial};

const SOURCES: &str = "MATCH (s:Source {tenant: $tenant, source_id: $id}) RETURN count(s) AS n";

async fn sources_of(graph: &neo4rs::Graph, tenant: &str, id: &str) -> i64 {
    let mut rows = graph
        .execute(
            neo4rs::query(SOURCES)
                .param("tenant", tenant)
                .param("id", id),
        )
        .await
        .expect("neo4j query");
    let row = rows.next().await.expect("row").expect("one row");
    row.get::<i64>("n").expect("n")
}

/// `epigraph dlq list --tenant <tenant> --json <extra…>`, one JSON value per letter.
fn list(env: &TestEnv, extra: &[&str]) -> Vec<serde_json::Value> {
    let mut args = vec!["dlq", "list", "--tenant", env.tenant.as_str(), "--json"];
    args.extend_from_slice(extra);
    env.epigraph(&args)
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON letter"))
        .collect()
}

fn id_where(letters: &[serde_json::Value], wanted: impl Fn(&serde_json::Value) -> bool) -> String {
    letters
        .iter()
        .find(|l| wanted(l))
        .unwrap_or_else(|| panic!("no such letter in {letters:#?}"))["id"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn dead_letters_are_listed_shown_and_replayed_once() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-dlqcli");
    let tenant = env.tenant.clone();
    ensure_topics(&env.kafka).await.expect("topics");
    let producer = EventProducer::new(&env.kafka).expect("producer");
    let documents = env.kafka.events_topic(SourceKind::Document);

    // A webhook body an older, stricter version refused; today's validation accepts it.
    let fixed = br#"{"kind": "document", "source_id": "replayed.md", "title": "Replay", "body": "We decided to move the Lisbon office to Porto in May."}"#;
    let letter = DeadLetter::new(
        "kind must be chat, email or calendar, not \"document\"",
        "webhook",
        Some(&tenant),
        "POST /v1/ingest",
        fixed,
        65536,
    );
    producer.dead_letter(&letter).await.expect("letter");
    // The same for an item a newer version replaced after it was refused.
    let stale = br#"{"kind": "document", "source_id": "stale.md", "body": "The budget is $10K."}"#;
    let mut letter = DeadLetter::new(
        "refused",
        "webhook",
        Some(&tenant),
        "POST /v1/ingest",
        stale,
        65536,
    );
    letter.at -= 3_600_000;
    producer.dead_letter(&letter).await.expect("letter");
    let newer = SourceEvent::upsert(
        &tenant,
        SourceKind::Document,
        "stale.md",
        None,
        "The budget is $12K.".into(),
        0,
    );
    producer.publish([newer], |_| {}).await.expect("newer");
    // A connector letter: not replayable from the letter.
    let letter = DeadLetter::new(
        "not UTF-8",
        "docs",
        Some(&tenant),
        "notes/bad.md",
        b"\xff\xfe",
        65536,
    );
    producer.dead_letter(&letter).await.expect("letter");
    // A bad line of an events file: refused by today's validation too.
    let file = env.dir.path().join("events.jsonl");
    std::fs::write(
        &file,
        "{\"kind\": \"fax\", \"source_id\": \"f1\", \"body\": \"Hello.\"}\n",
    )
    .unwrap();
    env.epigraph(&[
        "ingest",
        "events",
        file.to_str().unwrap(),
        "--tenant",
        &tenant,
    ]);
    // Two letters of the run: an undecodable event, and a good event under a wrong key whose
    // item is also published under its own key (so it is in the graph already).
    producer
        .publish_raw(
            &documents,
            &format!("{tenant}/garbage.md"),
            b"{\"not\": \"avro\"}",
        )
        .await
        .expect("publish");
    let good = SourceEvent::upsert(
        &tenant,
        SourceKind::Document,
        "good.md",
        None,
        "Project Atlas ships in June.".into(),
        0,
    );
    let payload = encode_event(&good).unwrap();
    producer
        .publish_raw(&documents, &format!("{tenant}/elsewhere.md"), &payload)
        .await
        .expect("publish");
    producer
        .publish_raw(&documents, &good.key(), &payload)
        .await
        .expect("publish");
    let report = env.run_until_idle();
    assert_eq!(report["dead_lettered"], 2, "{report}");

    // list: every letter with its reason, filtered by stage/source, tenant and time.
    let letters = list(&env, &[]);
    assert_eq!(letters.len(), 6, "{letters:#?}");
    assert!(
        letters.iter().all(|l| l["replayed"].is_null()),
        "{letters:#?}"
    );
    assert_eq!(list(&env, &["--source", "run"]).len(), 2);
    assert_eq!(
        list(&env, &["--source", "document"]).len(),
        2,
        "by the topic's kind"
    );
    assert_eq!(list(&env, &["--source", "webhook"]).len(), 2);
    assert_eq!(list(&env, &["--since", "2999-01-01"]).len(), 0);
    let table = env.epigraph(&["dlq", "list", "--tenant", &tenant]);
    assert!(
        table.starts_with("ID ") && table.contains("pending"),
        "{table}"
    );
    assert!(
        table.contains("kind must be chat, email or calendar"),
        "{table}"
    );
    assert!(table.trim_end().ends_with("6 letters"), "{table}");
    let garbage = id_where(&letters, |l| {
        l["reason"].as_str().unwrap().contains("not an Avro")
    });

    // show: the raw bytes as text and in hex.
    let shown = env.epigraph(&["dlq", "show", &garbage]);
    assert!(
        shown.contains("not an Avro single-object payload"),
        "{shown}"
    );
    assert!(shown.contains("{\"not\": \"avro\"}"), "{shown}");
    assert!(shown.contains("00000000  7b 22 6e 6f 74 22"), "{shown}");
    let shown: serde_json::Value =
        serde_json::from_str(&env.epigraph(&["dlq", "show", &garbage, "--json"])).unwrap();
    assert_eq!(shown["raw_preview"], "{\"not\": \"avro\"}");

    // A dry run says what would happen and changes nothing.
    let dry = last_json_line(&env.epigraph(&["dlq", "replay", "--tenant", &tenant, "--dry-run"]));
    assert_eq!(
        (dry["published"].as_u64(), dry["dry_run"].as_bool()),
        (Some(1), Some(true)),
        "{dry}"
    );
    assert!(list(&env, &[]).iter().all(|l| l["replayed"].is_null()));

    let replay = last_json_line(&env.epigraph(&["dlq", "replay", "--tenant", &tenant]));
    let counts = |r: &serde_json::Value| {
        [
            "candidates",
            "published",
            "already_recorded",
            "superseded",
            "refused_again",
            "not_replayable",
            "replayed_before",
        ]
        .map(|k| r[k].as_u64().unwrap())
    };
    assert_eq!(counts(&replay), [6, 1, 1, 1, 2, 1, 0], "{replay:#}");

    let letters = list(&env, &[]);
    assert_eq!(letters.len(), 8, "two refused again: {letters:#?}");
    let again: Vec<&serde_json::Value> = letters
        .iter()
        .filter(|l| !l["replay_of"].is_null())
        .collect();
    assert_eq!(again.len(), 2);
    assert!(
        again
            .iter()
            .any(|l| l["stage"] == "run" && l["reason"].as_str().unwrap().contains("not an Avro"))
    );
    assert!(
        again
            .iter()
            .any(|l| l["stage"] == "events" && l["reason"].as_str().unwrap().contains("fax"))
    );
    let marked = letters.iter().filter(|l| !l["replayed"].is_null()).count();
    assert_eq!(
        marked, 5,
        "all but the connector letter are marked: {letters:#?}"
    );
    let fixed_id = id_where(&letters, |l| {
        l["stage"] == "webhook" && l["replayed"]["outcome"] == "published"
    });

    env.run_until_idle();
    let graph = neo4j();
    assert_eq!(sources_of(&graph, &tenant, "replayed.md").await, 1);
    assert_eq!(sources_of(&graph, &tenant, "good.md").await, 1);
    let nodes = "MATCH (n:Node {tenant: $tenant}) RETURN count(n) AS n";
    let before = neo4j_count(&graph, nodes, &tenant).await;

    // Replaying again: the marked letters are left alone; only the two new letters are tried
    // (and refused again); nothing is published.
    let second = last_json_line(&env.epigraph(&["dlq", "replay", "--tenant", &tenant]));
    assert_eq!(counts(&second), [3, 0, 0, 0, 2, 1, 5], "{second:#}");
    // A replay whose mark was lost (a crash between publishing and marking): the item is the
    // current record of its key already, so it is not published again.
    producer
        .publish_tombstone(&env.kafka.dlq_replays_topic(), &fixed_id)
        .await
        .expect("tombstone");
    let lost = last_json_line(&env.epigraph(&["dlq", "replay", "--id", &fixed_id]));
    assert_eq!(counts(&lost), [1, 0, 1, 0, 0, 0, 0], "{lost:#}");

    env.run_until_idle();
    assert_eq!(sources_of(&graph, &tenant, "replayed.md").await, 1);
    assert_eq!(
        neo4j_count(&graph, nodes, &tenant).await,
        before,
        "not duplicated"
    );
}
