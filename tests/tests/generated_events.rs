//! `epigraph gen` → `epigraph ingest events`: every generated line reaches its kind's topic, and
//! a malformed line is dead-lettered with `file:line`, without stopping the run.

use std::collections::BTreeMap;
use std::time::Duration;

use epigraph_schemas::SourceKind;
use epigraph_sources::kafka::{EventConsumer, KafkaConfig, Polled};
use epigraph_tests::{TestEnv, find_dead_letter, ingest, last_json_line, serial, unique_tenant};

/// Events of `tenant` on the event topics, per kind (reads every topic from the beginning).
async fn events_per_kind(env: &TestEnv) -> BTreeMap<String, u64> {
    let tenant = env.tenant.as_str();
    let config = KafkaConfig {
        group_id: unique_tenant("tests-count"),
        ..env.kafka.clone()
    };
    let kind_of: BTreeMap<String, &str> = SourceKind::ALL
        .into_iter()
        .map(|kind| (config.events_topic(kind), kind.as_str()))
        .collect();
    let consumer = EventConsumer::from_beginning(&config, &config.all_event_topics())
        .expect("events consumer");
    let prefix = format!("{tenant}/");
    let mut counts = BTreeMap::new();
    while let Polled::Message(message) = consumer.poll(Duration::from_secs(10)).await.expect("poll")
    {
        if message
            .key
            .as_deref()
            .is_some_and(|k| k.starts_with(prefix.as_bytes()))
        {
            let kind = kind_of.get(&message.topic).copied().unwrap_or("other");
            *counts.entry(kind.to_string()).or_default() += 1;
        }
    }
    counts
}

#[tokio::test(flavor = "multi_thread")]
async fn generated_events_are_published_and_a_bad_line_is_dead_lettered() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-gen");
    let corpus = env.dir.path().join("corpus");
    let corpus_arg = corpus.to_str().unwrap();
    let summary =
        last_json_line(&env.epigraph(&["gen", corpus_arg, "--seed", "7", "--scale", "300"]));
    assert_eq!(summary["events"], 300, "{summary}");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(corpus.join("manifest.json")).unwrap()).unwrap();
    assert!(
        manifest["labels"]["units"].as_u64().unwrap() > 300,
        "{manifest}"
    );

    let events = corpus.join("events.jsonl");
    let mut text = std::fs::read_to_string(&events).unwrap();
    text.push_str("{\"kind\": \"fax\", \"source_id\": \"x\", \"body\": \"y\"}\n");
    std::fs::write(&events, text).unwrap();

    let summary = ingest(&env, &["events", events.to_str().unwrap()]);
    assert_eq!(
        (
            summary["lines"].as_u64(),
            summary["published"].as_u64(),
            summary["unchanged"].as_u64(),
            summary["dead_lettered"].as_u64()
        ),
        (Some(301), Some(300), Some(0), Some(1)),
        "{summary}"
    );
    assert_eq!(
        summary["tombstones"], manifest["ops"]["delete"],
        "{summary}"
    );

    let letter = find_dead_letter(&env, "the bad line", |l| {
        l.stage == "events" && l.tenant.as_deref() == Some(env.tenant.as_str())
    })
    .await;
    assert!(
        letter.reason.contains("events.jsonl:301"),
        "{}",
        letter.reason
    );
    assert!(letter.reason.contains("kind must be"), "{}", letter.reason);
    assert!(
        letter.location.ends_with("events.jsonl:301"),
        "{}",
        letter.location
    );

    let counts = events_per_kind(&env).await;
    let expected: BTreeMap<String, u64> = manifest["kinds"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(kind, n)| (kind.clone(), n.as_u64().unwrap()))
        .collect();
    assert_eq!(counts, expected);
    assert_eq!(counts.values().sum::<u64>(), 300);
}
