//! Bad input goes to the dead-letter topic with its reason and raw bytes; the pipeline goes on.

use base64::Engine;
use epigraph_schemas::{SourceEvent, SourceKind, encode_event};
use epigraph_sources::kafka::EventProducer;
use epigraph_tests::{TestEnv, find_dead_letter, neo4j, neo4j_count, serial};

#[tokio::test(flavor = "multi_thread")]
async fn undecodable_and_mismatched_events_are_dead_lettered_and_the_run_goes_on() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-dlq");
    let producer = EventProducer::new(&env.kafka).expect("producer");
    let topic = env.kafka.events_topic(SourceKind::Document);
    let garbage = b"{\"not\": \"avro\"}".to_vec();
    let (p1, o1) = producer
        .publish_raw(&topic, &format!("{}/garbage.md", env.tenant), &garbage)
        .await
        .expect("publish");
    let good = SourceEvent::upsert(
        &env.tenant,
        SourceKind::Document,
        "good.md",
        None,
        "A well-formed note about the Lisbon office.".into(),
        0,
    );
    let payload = encode_event(&good).unwrap();
    let (p2, o2) = producer
        .publish_raw(&topic, &format!("{}/elsewhere.md", env.tenant), &payload)
        .await
        .expect("publish");
    producer
        .publish_raw(&topic, &good.key(), &payload)
        .await
        .expect("publish");

    let report = env.run_until_idle();
    assert!(report["dead_lettered"].as_u64().unwrap() >= 2, "{report}");

    let at = format!("{topic}/{p1}@{o1}");
    let letter = find_dead_letter(&env, &at, |l| l.location == at).await;
    assert!(
        letter.reason.contains("not an Avro single-object payload"),
        "{}",
        letter.reason
    );
    assert_eq!(letter.tenant.as_deref(), Some(env.tenant.as_str()));
    assert_eq!(letter.stage, "run");
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(&letter.raw_base64)
            .unwrap(),
        garbage
    );
    let at = format!("{topic}/{p2}@{o2}");
    let letter = find_dead_letter(&env, &at, |l| l.location == at).await;
    assert!(
        letter.reason.contains("does not match"),
        "{}",
        letter.reason
    );

    // The query service lists the tenant's letters, newest first, with reason and raw item.
    let server = env.serve();
    let mut listed = serde_json::Value::Null;
    for _ in 0..50 {
        listed = server.get(&format!("/v1/dead-letters?tenant={}&stage=run", env.tenant));
        if listed["letters"].as_array().is_some_and(|l| l.len() >= 2) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let letters = listed["letters"].as_array().expect("letters");
    assert!(letters.len() >= 2, "{listed}");
    let garbage_letter = letters
        .iter()
        .find(|l| l["location"] == format!("{topic}/{p1}@{o1}"))
        .expect("the undecodable event is listed");
    assert_eq!(garbage_letter["raw_preview"], "{\"not\": \"avro\"}");
    assert!(
        garbage_letter["reason"]
            .as_str()
            .unwrap()
            .contains("not an Avro")
    );
    assert!(listed["by_stage"]["run"].as_u64().unwrap() >= 2, "{listed}");
    let other = server.get("/v1/dead-letters?tenant=nobody-else");
    assert_eq!(other["total"], 0, "tenant-scoped: {other}");
    drop(server);

    let graph = neo4j();
    let n = neo4j_count(
        &graph,
        "MATCH (s:Source {tenant: $tenant}) RETURN count(s) AS n",
        &env.tenant,
    )
    .await;
    assert_eq!(n, 1, "the well-formed event still lands");
}
