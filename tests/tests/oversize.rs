//! Events larger than a broker takes by default, against the real Kafka: a document of 2 MB
//! (under the documents source's 10 MiB cap, over Kafka's 1 MB default) is published whole; one
//! over `kafka.max_message_bytes` is dead-lettered with its size and the limit; one that a topic
//! created with a smaller limit refuses is dead-lettered with the command that raises it (when
//! `kafka.raise_topic_limits` is off; by default epigraph raises it, keeping the topic's other
//! settings) — and in every case the other documents of the scan are published, nothing stops.

use epigraph_tests::{TestEnv, find_dead_letter, incompressible_text, last_json_line, serial};

fn document(title: &str, bytes: usize, seed: u64) -> String {
    format!(
        "# {title}\n\nThe attached firmware image is the release candidate for the field trial.\n\n```\n{}\n```\n",
        incompressible_text(bytes, seed, "\n")
    )
}

fn ingest_docs_with(env: &TestEnv, vars: &[(&str, &str)]) -> serde_json::Value {
    let docs = env.docs();
    let args = [
        "ingest",
        "docs",
        docs.to_str().expect("utf-8 path"),
        "--tenant",
        &env.tenant,
    ];
    last_json_line(&env.epigraph_with_env(&args, vars))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_document_over_the_brokers_default_is_published_and_one_over_the_limit_dead_lettered() {
    let _guard = serial().await;
    let env = TestEnv::new("oversize");
    let docs = env.docs();
    let big = document("Firmware", 2_000_000, 7);
    std::fs::write(docs.join("firmware.md"), &big).expect("write");
    std::fs::write(
        docs.join("notes.md"),
        "# Notes\n\nThe field trial starts in March.\n",
    )
    .expect("write");
    let first = ingest_docs_with(&env, &[]);
    assert_eq!(first["published"], 2, "{first}");
    assert_eq!(first["dead_lettered"], 0, "{first}");

    // Over kafka.max_message_bytes: dead-lettered with its size and the limit; the scan goes on.
    std::fs::write(
        docs.join("firmware-b.md"),
        document("Firmware B", 600_000, 8),
    )
    .expect("write");
    std::fs::write(docs.join("more.md"), "# More\n\nThe trial ends in May.\n").expect("write");
    let second = ingest_docs_with(&env, &[("EPIGRAPH_KAFKA__MAX_MESSAGE_BYTES", "500000")]);
    assert_eq!(second["published"], 1, "{second}");
    assert_eq!(second["dead_lettered"], 1, "{second}");
    let letter = find_dead_letter(&env, "the event over the limit", |l| {
        l.location.contains("firmware-b.md")
    })
    .await;
    assert!(
        letter
            .reason
            .contains("over the 500000 byte limit (kafka.max_message_bytes)"),
        "{letter:?}"
    );
    assert_eq!(letter.stage, "producer");
    assert!(letter.raw_size > 600_000, "{letter:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_event_a_topic_refuses_as_too_large_is_dead_lettered_with_the_fix() {
    let _guard = serial().await;
    let env = TestEnv::new("oversize-topic");
    let docs = env.docs();
    // The topics are created by a run with the broker's own 1 MB limit (as an earlier version of
    // epigraph, or another tool, would have made them).
    std::fs::write(
        docs.join("notes.md"),
        "# Notes\n\nThe trial starts in March.\n",
    )
    .expect("write");
    let first = ingest_docs_with(&env, &[("EPIGRAPH_KAFKA__MAX_MESSAGE_BYTES", "1000000")]);
    assert_eq!(first["published"], 1, "{first}");

    std::fs::write(docs.join("firmware.md"), document("Firmware", 2_000_000, 9)).expect("write");
    std::fs::write(docs.join("more.md"), "# More\n\nThe trial ends in May.\n").expect("write");
    // Existing topics left as they are (`kafka.raise_topic_limits = false`).
    let second = ingest_docs_with(&env, &[("EPIGRAPH_KAFKA__RAISE_TOPIC_LIMITS", "false")]);
    assert_eq!(second["published"], 1, "{second}");
    assert_eq!(second["dead_lettered"], 1, "{second}");
    let letter = find_dead_letter(&env, "the refused event", |l| {
        l.location.contains("firmware.md")
    })
    .await;
    assert!(
        letter.reason.contains("refuses it as too large")
            && letter.reason.contains("max.message.bytes="),
        "{letter:?}"
    );
    assert!(letter.raw_size > 2_000_000, "{letter:?}");

    // By default the existing topic's limit is raised to kafka.max_message_bytes (its other
    // settings kept) when epigraph starts; the refused document was not recorded as published,
    // so the next scan sends it.
    let third = ingest_docs_with(&env, &[]);
    assert_eq!(
        (third["published"].as_u64(), third["unchanged"].as_u64()),
        (Some(1), Some(2)),
        "{third}"
    );
    let topic = env
        .kafka
        .events_topic(epigraph_schemas::SourceKind::Document);
    let settings = topic_settings(&env, &topic).await;
    assert_eq!(
        settings["max.message.bytes"],
        (16 * 1024 * 1024).to_string()
    );
    assert_eq!(settings["cleanup.policy"], "compact", "{settings:?}");
}

/// The dynamic settings of a topic, read from the broker.
async fn topic_settings(env: &TestEnv, topic: &str) -> std::collections::BTreeMap<String, String> {
    use rdkafka::admin::{AdminClient, AdminOptions, ConfigSource, ResourceSpecifier};
    let admin: AdminClient<rdkafka::client::DefaultClientContext> = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", &env.kafka.bootstrap)
        .create()
        .expect("admin client");
    let described = admin
        .describe_configs([&ResourceSpecifier::Topic(topic)], &AdminOptions::new())
        .await
        .expect("describe");
    let resource = described.into_iter().next().unwrap().expect("the topic");
    resource
        .entries
        .into_iter()
        .filter(|e| e.source == ConfigSource::DynamicTopic)
        .filter_map(|e| Some((e.name, e.value?)))
        .collect()
}
