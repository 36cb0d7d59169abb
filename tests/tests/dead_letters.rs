//! Bad input goes to the dead-letter topic with its reason and raw bytes; the pipeline goes on.

use std::time::Duration;

use base64::Engine;
use epigraph_connectors::kafka::{DeadLetter, EventConsumer, EventProducer, KafkaConfig, Polled};
use epigraph_schemas::{SourceEvent, SourceKind, encode_event};
use epigraph_tests::{TestEnv, neo4j, neo4j_count, serial};

async fn dead_letter_at(location: &str) -> DeadLetter {
    let config = KafkaConfig {
        group_id: format!("tests-dlq-{}", std::process::id()),
        ..KafkaConfig::default()
    };
    let consumer =
        EventConsumer::from_beginning(&config, &[config.dlq_topic()]).expect("DLQ consumer");
    loop {
        match consumer.poll(Duration::from_secs(10)).await.expect("poll") {
            Polled::Message(message) => {
                let letter: DeadLetter =
                    serde_json::from_slice(message.payload.as_deref().unwrap_or_default())
                        .expect("dead letters are JSON");
                if letter.location == location {
                    return letter;
                }
            }
            Polled::Idle => panic!("no dead letter for {location}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn undecodable_and_mismatched_events_are_dead_lettered_and_the_run_goes_on() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-dlq");
    let producer = EventProducer::new(&KafkaConfig::default()).expect("producer");
    let topic = KafkaConfig::default().events_topic(SourceKind::Document);
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

    let letter = dead_letter_at(&format!("{topic}/{p1}@{o1}")).await;
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
    let letter = dead_letter_at(&format!("{topic}/{p2}@{o2}")).await;
    assert!(
        letter.reason.contains("does not match"),
        "{}",
        letter.reason
    );

    let graph = neo4j();
    let n = neo4j_count(
        &graph,
        "MATCH (s:Source {tenant: $tenant}) RETURN count(s) AS n",
        &env.tenant,
    )
    .await;
    assert_eq!(n, 1, "the well-formed event still lands");
}
