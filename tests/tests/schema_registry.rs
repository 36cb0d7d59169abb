//! The schema registry as data teams run it: `[kafka.schema_registry] url` set, against the
//! real Apicurio Registry that `deploy/local/services.sh up` runs (Confluent-compatible API).
//! Producers register the `.avsc` contracts (envelope under `<topic>-value` with references to
//! the per-kind records, compatibility BACKWARD) and write the registry wire format; the run
//! reads both encodings; an id the registry does not know is dead-lettered; a contract change
//! that breaks BACKWARD is refused by the registry.

use std::time::Duration;

use epigraph_schemas::codec::{
    RECORD_AVSC, SOURCE_EVENT_AVSC, SOURCE_EVENT_V0_AVSC, SOURCE_EVENT_V1_AVSC,
    encode_registry_framed,
};
use epigraph_schemas::{SourceEvent, SourceKind, encode_event};
use epigraph_sources::kafka::{
    EventConsumer, EventProducer, KafkaConfig, Polled, RegistryCodec, RegistryError,
    SchemaReference, value_subject,
};
use epigraph_tests::{
    TestEnv, find_dead_letter, last_json_line, neo4j, neo4j_count, neo4j_memory_texts,
    schema_registry_url, serial, unique_tenant,
};

const BUDGET: &str = "# Budget memo\n\nWe decided to cap the Q3 marketing budget at 250K euros after the board review.\n";
const HIRING: &str = "# Hiring plan\n\nThe platform team will hire two backend engineers for the ingestion pipeline.\n\n- Who owns the Kafka upgrade?\n";

/// Every payload on a topic, from the beginning.
async fn payloads(kafka: &KafkaConfig, topic: &str) -> Vec<Vec<u8>> {
    let config = KafkaConfig {
        group_id: unique_tenant("tests-registry"),
        ..kafka.clone()
    };
    let consumer = EventConsumer::from_beginning(&config, &[topic.to_string()]).expect("consumer");
    let mut out = Vec::new();
    loop {
        match consumer.poll(Duration::from_secs(5)).await.expect("poll") {
            Polled::Message(message) => out.push(message.payload.unwrap_or_default()),
            Polled::Idle => return out,
        }
    }
}

/// GET a path of the registry's API: `(status, JSON answer)`.
async fn registry_get(kafka: &KafkaConfig, path: &str) -> (u16, serde_json::Value) {
    let response = reqwest::get(format!("{}{path}", kafka.schema_registry.url))
        .await
        .expect("the registry answers");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or_default())
}

/// POST a schema (with references) to a subject of the registry: `(status, JSON answer)`.
async fn registry_post(
    kafka: &KafkaConfig,
    subject: &str,
    schema: &str,
    references: &[SchemaReference],
) -> (u16, serde_json::Value) {
    let body = serde_json::json!({ "schema": schema, "references": references });
    let response = reqwest::Client::new()
        .post(format!(
            "{}/subjects/{subject}/versions",
            kafka.schema_registry.url
        ))
        .header("content-type", "application/vnd.schemaregistry.v1+json")
        .body(body.to_string())
        .send()
        .await
        .expect("the registry answers");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or_default())
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).expect("JSON")
}

#[tokio::test(flavor = "multi_thread")]
async fn ingest_writes_the_registry_wire_format_and_the_run_builds_the_same_graph() {
    let _serial = serial().await;
    let plain = TestEnv::new("e2e-sr-plain");
    let registered = TestEnv::new("e2e-sr").with_schema_registry();
    for env in [&plain, &registered] {
        std::fs::write(env.docs().join("budget.md"), BUDGET).unwrap();
        std::fs::write(env.docs().join("hiring.md"), HIRING).unwrap();
        assert_eq!(env.ingest_docs()["published"], 2);
    }

    // Without a registry: single-object encoding, as before.
    let topic = plain.kafka.events_topic(SourceKind::Document);
    for payload in payloads(&plain.kafka, &topic).await {
        assert_eq!(payload[..2], [0xC3, 0x01]);
    }
    // With one: magic byte 0, then the id the registry gave the envelope.
    let topic = registered.kafka.events_topic(SourceKind::Document);
    let framed = payloads(&registered.kafka, &topic).await;
    assert_eq!(framed.len(), 2);
    let id = u32::from_be_bytes(framed[0][1..5].try_into().unwrap());
    for payload in &framed {
        assert_eq!(payload[0], 0, "magic byte");
        assert_eq!(u32::from_be_bytes(payload[1..5].try_into().unwrap()), id);
    }
    // The id resolves at the registry to the envelope, referencing the four per-kind records.
    let (status, schema) = registry_get(&registered.kafka, &format!("/schemas/ids/{id}")).await;
    assert_eq!(status, 200, "{schema}");
    assert_eq!(
        json(schema["schema"].as_str().unwrap()),
        json(SOURCE_EVENT_AVSC)
    );
    let mut names: Vec<&str> = schema["references"]
        .as_array()
        .expect("references")
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    names.sort();
    let mut expected: Vec<&str> = RECORD_AVSC.iter().map(|(full, ..)| *full).collect();
    expected.sort();
    assert_eq!(names, expected);
    for reference in schema["references"].as_array().unwrap() {
        let path = format!(
            "/subjects/{}/versions/{}",
            reference["subject"].as_str().unwrap(),
            reference["version"]
        );
        let (status, record) = registry_get(&registered.kafka, &path).await;
        assert_eq!(status, 200, "{path}: {record}");
        let (_, _, text) = RECORD_AVSC
            .iter()
            .find(|(full, ..)| *full == reference["name"].as_str().unwrap())
            .unwrap();
        assert_eq!(json(record["schema"].as_str().unwrap()), json(text));
    }
    // Under the topic's subject (TopicNameStrategy), compatibility BACKWARD.
    let subject = value_subject(&topic);
    let (status, latest) = registry_get(
        &registered.kafka,
        &format!("/subjects/{subject}/versions/latest"),
    )
    .await;
    assert_eq!(status, 200, "{latest}");
    assert_eq!(latest["id"], id);
    let (_, config) = registry_get(&registered.kafka, &format!("/config/{subject}")).await;
    assert_eq!(config["compatibilityLevel"], "BACKWARD", "{config}");

    // The run reads the registry's framing and builds the graph single-object encoding builds.
    for env in [&plain, &registered] {
        let report = env.run_until_idle();
        assert_eq!(report["dead_lettered"], 0, "{report}");
    }
    let graph = neo4j();
    let count = "MATCH (s:Source:Document {tenant: $tenant}) RETURN count(s) AS n";
    assert_eq!(neo4j_count(&graph, count, &registered.tenant).await, 2);
    let texts = neo4j_memory_texts(&graph, &registered.tenant).await;
    assert!(texts.len() >= 2, "{texts:?}");
    assert_eq!(texts, neo4j_memory_texts(&graph, &plain.tenant).await);
    let count = "MATCH (n {tenant: $tenant}) RETURN count(n) AS n";
    assert_eq!(
        neo4j_count(&graph, count, &registered.tenant).await,
        neo4j_count(&graph, count, &plain.tenant).await
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_mixed_topic_is_read_and_an_unknown_schema_id_is_dead_lettered() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-sr-mixed").with_schema_registry();
    let topic = env.kafka.events_topic(SourceKind::Document);
    let producer = EventProducer::new(&env.kafka).expect("producer");
    let event = |id: &str, body: &str| {
        SourceEvent::upsert(
            &env.tenant,
            SourceKind::Document,
            id,
            None,
            body.into(),
            1_767_225_600_000,
        )
    };
    // Registry-framed, through the producer (which registers the contracts first).
    let framed = event(
        "framed.md",
        "We decided to move the Lisbon office to Porto in May.",
    );
    producer.publish([framed], |_| {}).await.expect("publish");
    // Single-object encoded, as an older producer (or one without the registry) wrote it.
    let single = event(
        "single.md",
        "The platform team owns the ingestion pipeline.",
    );
    producer
        .publish_raw(&topic, &single.key(), &encode_event(&single).unwrap())
        .await
        .expect("publish");
    // Registry-framed under an id no registry gave out.
    let unknown_id = 2_000_000_001_u32;
    let stray = event("stray.md", "Nobody can read this one.");
    let payload = encode_registry_framed(unknown_id, &stray).unwrap();
    let (partition, offset) = producer
        .publish_raw(&topic, &stray.key(), &payload)
        .await
        .expect("publish");
    let framings: Vec<u8> = payloads(&env.kafka, &topic)
        .await
        .iter()
        .map(|p| p[0])
        .collect();
    assert_eq!(framings, [0, 0xC3, 0]);

    let report = env.run_until_idle();
    assert_eq!(report["dead_lettered"], 1, "{report}");
    let graph = neo4j();
    let texts = neo4j_memory_texts(&graph, &env.tenant).await;
    assert!(
        texts.iter().any(|t| t.contains("Porto")) && texts.iter().any(|t| t.contains("owns")),
        "both encodings land: {texts:?}"
    );
    let count = "MATCH (s:Source {tenant: $tenant}) RETURN count(s) AS n";
    assert_eq!(neo4j_count(&graph, count, &env.tenant).await, 2);
    let at = format!("{topic}/{partition}@{offset}");
    let letter = find_dead_letter(&env, &at, |l| l.location == at).await;
    assert!(
        letter
            .reason
            .contains("schema id 2000000001 is not known to the schema registry"),
        "{}",
        letter.reason
    );
    assert_eq!(letter.stage, "run");
    assert_eq!(letter.tenant.as_deref(), Some(env.tenant.as_str()));
}

#[tokio::test(flavor = "multi_thread")]
async fn registry_framed_events_without_a_registry_are_dead_lettered_and_read_once_it_is_set() {
    let _serial = serial().await;
    // A producer with the registry, a pipeline without it (the data team configured one side).
    let mut env = TestEnv::new("e2e-sr-none");
    let producer = EventProducer::new(&KafkaConfig {
        schema_registry: epigraph_sources::kafka::SchemaRegistryConfig {
            url: schema_registry_url(),
            ..Default::default()
        },
        ..env.kafka.clone()
    })
    .expect("producer");
    let event = SourceEvent::upsert(
        &env.tenant,
        SourceKind::Chat,
        "C1/1.0",
        None,
        "We decided to ship the Kafka upgrade on Friday.".into(),
        1_767_225_600_000,
    );
    producer.publish([event], |_| {}).await.expect("publish");
    let report = env.run_until_idle();
    assert_eq!(report["dead_lettered"], 1, "{report}");
    let topic = env.kafka.events_topic(SourceKind::Chat);
    let letter = find_dead_letter(&env, &topic, |l| l.location.starts_with(&topic)).await;
    assert!(
        letter.reason.contains("registry-framed payload (schema id"),
        "{}",
        letter.reason
    );
    assert!(
        letter.reason.contains("no schema registry is configured"),
        "{}",
        letter.reason
    );

    // Configured since: a replay decodes the letter through the registry and finds it is the
    // topic's current record (nothing to republish), and the next run, which restores from the
    // compacted topic, reads it.
    env.kafka.schema_registry.url = schema_registry_url();
    let replay = last_json_line(&env.epigraph(&["dlq", "replay", "--tenant", &env.tenant]));
    assert_eq!(
        (&replay["already_recorded"], &replay["refused_again"]),
        (&serde_json::json!(1), &serde_json::json!(0)),
        "{replay:#}"
    );
    let report = env.run_until_idle();
    assert_eq!(report["dead_lettered"], 0, "{report}");
    let graph = neo4j();
    let count = "MATCH (s:Source:Chat {tenant: $tenant}) RETURN count(s) AS n";
    assert_eq!(neo4j_count(&graph, count, &env.tenant).await, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_contract_change_that_breaks_backward_compatibility_is_refused() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-sr-compat").with_schema_registry();
    let topic = env.kafka.events_topic(SourceKind::Email);
    let subject = value_subject(&topic);
    let codec = RegistryCodec::from_config(&env.kafka)
        .expect("codec")
        .expect("a registry is configured");
    let id = codec.register_contracts(&topic).await.expect("registered");
    assert_eq!(
        codec.register_contracts(&topic).await.expect("cached"),
        id,
        "registering again changes nothing"
    );
    assert_eq!(
        codec
            .registry()
            .compatibility(&subject)
            .await
            .expect("config"),
        "BACKWARD"
    );
    let (_, registered) = registry_get(&env.kafka, &format!("/schemas/ids/{id}")).await;
    let references: Vec<SchemaReference> =
        serde_json::from_value(registered["references"].clone()).expect("references");

    // A new field without a default: the new reader cannot read what the old writer wrote.
    let mut breaking = json(SOURCE_EVENT_AVSC);
    breaking["fields"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({ "name": "region", "type": "string" }));
    let (status, answer) =
        registry_post(&env.kafka, &subject, &breaking.to_string(), &references).await;
    assert_eq!(status, 409, "{answer}");
    let error = codec
        .registry()
        .register(&subject, &breaking.to_string(), &references)
        .await
        .unwrap_err();
    assert!(
        matches!(error, RegistryError::Incompatible { .. }),
        "{error}"
    );
    // The same field with a default is a BACKWARD-compatible change: accepted.
    let mut compatible = json(SOURCE_EVENT_AVSC);
    compatible["fields"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({ "name": "region", "type": ["null", "string"], "default": null }));
    let (status, answer) =
        registry_post(&env.kafka, &subject, &compatible.to_string(), &references).await;
    assert_eq!(status, 200, "{answer}");
    assert_ne!(answer["id"], id);

    // The frozen history of the envelope (v0, v1, then the current one with its references)
    // passes the registry's BACKWARD check step by step.
    let history = value_subject(&format!("{}.history", env.kafka.topic_prefix));
    codec
        .registry()
        .set_compatibility(&history, "BACKWARD")
        .await
        .expect("config");
    for (schema, references) in [
        (SOURCE_EVENT_V0_AVSC, &[][..]),
        (SOURCE_EVENT_V1_AVSC, &[][..]),
        (SOURCE_EVENT_AVSC, &references[..]),
    ] {
        let (status, answer) = registry_post(&env.kafka, &history, schema, references).await;
        assert_eq!(status, 200, "{answer}");
    }
    let (_, versions) = registry_get(&env.kafka, &format!("/subjects/{history}/versions")).await;
    assert_eq!(versions, serde_json::json!([1, 2, 3]));
}

#[test]
fn ingest_with_the_registry_down_fails_with_a_clear_error() {
    let mut env = TestEnv::new("e2e-sr-down");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/apis/ccompat/v7");
    env.kafka.schema_registry.url = url.clone();
    std::fs::write(env.docs().join("budget.md"), BUDGET).unwrap();
    let docs = env.docs();
    let output = env
        .command(&[
            "ingest",
            "docs",
            docs.to_str().unwrap(),
            "--tenant",
            &env.tenant,
        ])
        .output()
        .expect("spawning epigraph");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("the schema registry at {url} is unreachable")),
        "{stderr}"
    );
}

/// The registry away while a run reads registry-framed events it has no schema for (a network
/// partition between the run and the registry: the run reaches the real Apicurio through a TCP
/// relay the test keeps closed, then opens). The run does not stop and dead-letters nothing:
/// `/readyz` answers `503` naming the schema registry and what the run was doing, and once
/// the relay opens every event is read and the outage is logged as begun and ended.
#[tokio::test(flavor = "multi_thread")]
async fn a_registry_away_mid_run_is_ridden_out_and_nothing_is_dead_lettered() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-sr-away").with_schema_registry();
    let producer = EventProducer::new(&env.kafka).expect("producer");
    let events: Vec<SourceEvent> = [BUDGET, HIRING]
        .iter()
        .enumerate()
        .map(|(i, body)| {
            SourceEvent::upsert(
                &env.tenant,
                SourceKind::Document,
                &format!("memo-{i}.md"),
                None,
                (*body).into(),
                1_767_225_600_000,
            )
        })
        .collect();
    producer.publish(events, |_| {}).await.expect("publish");

    // The run's registry: a relay port where nothing listens yet.
    let registry = schema_registry_url();
    let upstream = registry
        .trim_start_matches("http://")
        .split('/')
        .next()
        .expect("host:port")
        .to_string();
    let relay = epigraph_tests::free_local_addr();
    let relayed = registry.replacen(&upstream, &relay, 1);
    let addr = epigraph_tests::free_local_addr();
    let log = env.dir.path().join("run.log");
    let mut child = env
        .command(&["run", "--until-idle"])
        .envs([
            ("EPIGRAPH_LANCEDB__EMBED", "false"),
            ("EPIGRAPH_RUN__RETRY_MAX_MS", "1000"),
            ("EPIGRAPH_KAFKA__SCHEMA_REGISTRY__URL", relayed.as_str()),
            ("EPIGRAPH_RUN__METRICS_LISTEN", addr.as_str()),
            ("RUST_LOG", "warn,epigraph=info"),
            ("NO_COLOR", "1"),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("spawning epigraph run");
    let run_log = || std::fs::read_to_string(&log).unwrap_or_default();
    let started = std::time::Instant::now();

    // Not ready, and why.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let body = loop {
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "epigraph run exited ({status}) with the registry away:\n{}",
                run_log()
            );
        }
        let answer = tokio::task::spawn_blocking({
            let addr = addr.clone();
            move || epigraph_tests::http_text(&addr, "/readyz")
        })
        .await
        .unwrap();
        if let Some((503, body)) = &answer
            && body.contains("schema_registry")
        {
            break body.clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "/readyz never named the schema registry: {answer:?}\n{}",
            run_log()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert!(
        body.contains("decoding through the schema registry") && body.contains("unreachable"),
        "{body}"
    );
    let named_after = started.elapsed();
    // Counted on /metrics like any dependency's outage.
    let metrics = tokio::task::spawn_blocking({
        let addr = addr.clone();
        move || epigraph_tests::scrape_metrics(&addr).unwrap_or_default()
    })
    .await
    .unwrap();
    let label = "{dependency=\"schema_registry\"}";
    let sample = |name: &str| epigraph_tests::metric_sample(&metrics, &format!("{name}{label}"));
    assert_eq!(sample("epigraph_dependency_up"), Some(0.0), "{metrics}");
    assert_eq!(sample("epigraph_outages_total"), Some(1.0), "{metrics}");
    assert!(
        sample("epigraph_dependency_retries_total").is_some_and(|n| n >= 1.0),
        "{metrics}"
    );
    // Still waiting a while later, not exited.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        child.try_wait().unwrap().is_none(),
        "the run exited:\n{}",
        run_log()
    );

    // The relay opens: every connection is carried to the real registry.
    let listener = tokio::net::TcpListener::bind(&relay).await.expect("relay");
    let relaying = tokio::spawn(async move {
        loop {
            let Ok((mut inbound, _)) = listener.accept().await else {
                return;
            };
            let upstream = upstream.clone();
            tokio::spawn(async move {
                if let Ok(mut outbound) = tokio::net::TcpStream::connect(&upstream).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    let opened = std::time::Instant::now();
    let output = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .expect("run output");
    relaying.abort();
    eprintln!(
        "registry away: /readyz named it {:.1} s after the start; the run ended {:.1} s after \
         the relay opened",
        named_after.as_secs_f64(),
        opened.elapsed().as_secs_f64()
    );
    let log = run_log();
    assert!(output.status.success(), "{log}");
    let report = last_json_line(&String::from_utf8_lossy(&output.stdout));
    assert_eq!(report["dead_lettered"], 0, "{report}");
    assert!(
        log.contains("outage began") && log.contains("outage ended"),
        "{log}"
    );
    let graph = neo4j();
    let count = "MATCH (s:Source {tenant: $tenant}) RETURN count(s) AS n";
    assert_eq!(neo4j_count(&graph, count, &env.tenant).await, 2);
}
