//! `epigraph ingest topic`: a real Kafka Connect worker (standalone, the FileStreamSource
//! connector that ships with Kafka) writes Debezium-shaped change events into a topic —
//! through the `JsonConverter` with schemas, and through Apicurio's `AvroConverter` in the
//! registry wire format — and `[[sources.topic]]` maps them: creates, an update, a delete, a bad
//! record dead-lettered; the graph ends with what upstream holds, and the follower's status
//! report says what it did.

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use epigraph_sources::kafka::{EventConsumer, KafkaConfig, Polled};
use epigraph_tests::{
    TestEnv, connector_reports, find_dead_letter, http_post, last_json_line, neo4j, neo4j_count,
    schema_registry_url, serial, unique_tenant,
};

/// A standalone Kafka Connect worker; killed when dropped.
struct Connect(Child);

impl Drop for Connect {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A worker writing the lines of `file` to `topic` with `value_converter` (worker properties).
fn start_connect(
    dir: &std::path::Path,
    file: &std::path::Path,
    topic: &str,
    value_converter: &str,
) -> Connect {
    let libs = epigraph_sinks::embed::default_home().join("connect/libs");
    assert!(
        libs.join("connect-runtime-4.1.2.jar").exists(),
        "{} is missing: run deploy/local/services.sh fetch",
        libs.display()
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let worker = dir.join("worker.properties");
    std::fs::write(
        &worker,
        format!(
            "bootstrap.servers=127.0.0.1:9092\n\
             key.converter=org.apache.kafka.connect.storage.StringConverter\n\
             {value_converter}\n\
             plugin.discovery=only_scan\n\
             offset.storage.file.filename={}\n\
             offset.flush.interval.ms=500\n\
             listeners=http://127.0.0.1:{port}\n",
            dir.join("connect.offsets").display()
        ),
    )
    .unwrap();
    let connector = dir.join("crm-notes.properties");
    std::fs::write(
        &connector,
        format!(
            "name=crm-notes-{port}\n\
             connector.class=org.apache.kafka.connect.file.FileStreamSourceConnector\n\
             tasks.max=1\nfile={}\ntopic={topic}\n",
            file.display()
        ),
    )
    .unwrap();
    let log = std::fs::File::create(dir.join("connect.log")).unwrap();
    let child = Command::new("java")
        .arg("-cp")
        .arg(format!("{}/*", libs.display()))
        .arg("org.apache.kafka.connect.cli.ConnectStandalone")
        .arg(&worker)
        .arg(&connector)
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .stdin(Stdio::null())
        .spawn()
        .expect("starting Kafka Connect (java)");
    Connect(child)
}

/// Records on `topic` so far.
fn records_on(kafka: &KafkaConfig, topic: &str) -> i64 {
    let config = KafkaConfig {
        group_id: unique_tenant("tests-connect"),
        ..kafka.clone()
    };
    match EventConsumer::from_beginning(&config, &[topic.to_string()]) {
        Ok(consumer) => consumer
            .high_watermarks()
            .map(|marks| marks.values().sum())
            .unwrap_or(0),
        Err(_) => 0,
    }
}

fn append(file: &std::path::Path, lines: &[serde_json::Value]) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(file)
        .unwrap();
    for line in lines {
        writeln!(f, "{line}").unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn kafka_connect_change_events_reach_the_graph_with_updates_deletes_and_dead_letters() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-connect");
    change_events_reach_the_graph(
        &env,
        "json",
        "value.converter=org.apache.kafka.connect.json.JsonConverter\n\
         value.converter.schemas.enable=true",
    )
    .await;
}

/// Apicurio's converter in the Confluent frame: a 4-byte id (`Legacy4ByteIdHandler`) that is
/// the *content* id, which the Confluent-compatible API resolves (its default, the global id,
/// would name another schema once the two diverge); `dereference-schema` because 2.4.2 fails on
/// a non-record schema without it (FileStreamSource writes strings).
#[tokio::test(flavor = "multi_thread")]
async fn kafka_connect_avro_through_the_registry_reaches_the_graph() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-connect-avro").with_schema_registry();
    let ccompat = schema_registry_url();
    // The string schema registered first under another subject: the content id the worker's
    // frame carries is then not the global id of the worker's artifact version.
    let (status, answer) = http_post(
        &format!("{ccompat}/subjects/{}.other-value/versions", env.tenant),
        None,
        r#"{"schema": "\"string\""}"#,
    );
    assert_eq!(status, 200, "registering a schema: {answer}");
    let registry_v2 = ccompat.replace("/apis/ccompat/v7", "/apis/registry/v2");
    change_events_reach_the_graph(
        &env,
        "avro",
        &format!(
            "value.converter=io.apicurio.registry.utils.converter.AvroConverter\n\
             value.converter.apicurio.registry.url={registry_v2}\n\
             value.converter.apicurio.registry.auto-register=true\n\
             value.converter.apicurio.registry.id-handler=io.apicurio.registry.serde.Legacy4ByteIdHandler\n\
             value.converter.apicurio.registry.use-id=contentId\n\
             value.converter.apicurio.registry.headers.enabled=false\n\
             value.converter.apicurio.registry.dereference-schema=true"
        ),
    )
    .await;
    // What the worker wrote is the registry wire format.
    let topic = format!("{}.crm.notes", env.kafka.topic_prefix);
    let consumer = EventConsumer::from_beginning(
        &KafkaConfig {
            group_id: unique_tenant("tests-connect-avro"),
            ..env.kafka.clone()
        },
        &[topic],
    )
    .unwrap();
    let Polled::Message(first) = consumer.poll(Duration::from_secs(10)).await.unwrap() else {
        panic!("nothing on the topic");
    };
    let payload = first.payload.unwrap();
    assert_eq!(payload[0], 0, "magic byte: {payload:?}");
}

/// Creates, a row without text, an update and a delete, written by a Connect worker with
/// `value_converter` and read with `format`.
async fn change_events_reach_the_graph(env: &TestEnv, format: &str, value_converter: &str) {
    let topic = format!("{}.crm.notes", env.kafka.topic_prefix);
    let changes = env.dir.path().join("changes.jsonl");
    std::fs::write(&changes, "").unwrap();
    let config = env.dir.path().join("epigraph.toml");
    std::fs::write(
        &config,
        format!(
            r#"[lancedb]
embed = false

[[sources.topic]]
name = "crm-notes"
topic = "{topic}"
tenant = "{tenant}"
kind = "document"
format = "{format}"
envelope = "debezium"
source_id = "/id"
source_id_prefix = "crm/notes/"
title = "/subject"
body = "/text"
author = "/author"
occurred_at = "/ts"
"#,
            tenant = env.tenant
        ),
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let connect = start_connect(env.dir.path(), &changes, &topic, value_converter);

    let row = |id: &str, subject: &str, text: &str| {
        serde_json::json!({"id": id, "subject": subject, "text": text,
            "author": "maria@acme.example", "ts": 1_764_000_000_000_i64})
    };
    let pricing = row(
        "n1",
        "Pricing",
        "We decided to raise the seat price to €40 in January.",
    );
    let vendor = row(
        "n2",
        "Vendor",
        "We chose Postgres over MySQL for the billing service.",
    );
    append(
        &changes,
        &[
            serde_json::json!({"op": "c", "before": null, "after": pricing}),
            serde_json::json!({"op": "c", "before": null, "after": vendor}),
            serde_json::json!({"op": "c", "before": null, "after": {"id": "n3", "subject": "No text"}}),
        ],
    );
    let deadline = Instant::now() + Duration::from_secs(120);
    while records_on(&env.kafka, &topic) < 3 {
        assert!(
            Instant::now() < deadline,
            "Kafka Connect wrote nothing: {}",
            std::fs::read_to_string(env.dir.path().join("connect.log")).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let first =
        last_json_line(&env.epigraph(&["--config", config, "ingest", "topic", "crm-notes"]));
    assert_eq!(
        (&first["read"], &first["published"], &first["dead_lettered"]),
        (&3.into(), &2.into(), &1.into()),
        "{first}"
    );
    let letter = find_dead_letter(env, "the row without text", |l| {
        l.stage == "topic" && l.reason.contains("no text at body")
    })
    .await;
    assert!(letter.location.starts_with(&topic), "{letter:?}");
    assert!(letter.reason.contains("crm-notes"), "{letter:?}");

    // Upstream: the price changes, the vendor note is deleted.
    let repriced = row(
        "n1",
        "Pricing",
        "We decided to raise the seat price to €45 in March instead.",
    );
    append(
        &changes,
        &[
            serde_json::json!({"op": "u", "before": pricing, "after": repriced}),
            serde_json::json!({"op": "d", "before": vendor, "after": null}),
        ],
    );
    while records_on(&env.kafka, &topic) < 5 {
        assert!(Instant::now() < deadline, "Kafka Connect stopped writing");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    drop(connect);
    let second =
        last_json_line(&env.epigraph(&["--config", config, "ingest", "topic", "crm-notes"]));
    assert_eq!(
        (&second["read"], &second["published"], &second["tombstoned"]),
        (&2.into(), &1.into(), &1.into()),
        "only the new records are read (offsets committed): {second}"
    );
    // The follower's last word on `<prefix>.connectors`: the read ended, and what it did.
    let reports = connector_reports(env).await;
    let report = &reports[&format!("{}/topic/crm-notes", env.tenant)];
    assert!(
        report.stopped && report.up && !report.following,
        "{report:?}"
    );
    assert_eq!(
        (report.published, report.tombstoned, report.dead_letters),
        (1, 1, 0),
        "{report:?}"
    );
    assert_eq!(report.last_error, None, "{report:?}");

    env.epigraph(&["--config", config, "run", "--until-idle"]);
    let graph = neo4j();
    let count = |cypher: &'static str| {
        let graph = graph.clone();
        let tenant = env.tenant.clone();
        async move { neo4j_count(&graph, cypher, &tenant).await }
    };
    assert_eq!(
        count("MATCH (s:Source:Document {tenant: $tenant, source_id: 'crm/notes/n1'}) RETURN count(s) AS n").await,
        1
    );
    assert_eq!(
        count("MATCH (s:Source {tenant: $tenant, source_id: 'crm/notes/n2'}) RETURN count(s) AS n")
            .await,
        0,
        "the delete upstream removed the note"
    );
    assert_eq!(
        count("MATCH (m:Memory {tenant: $tenant, source_id: 'crm/notes/n1'}) WHERE m.text CONTAINS '€45' RETURN count(m) AS n").await,
        1,
        "the update's text is what the graph holds"
    );
    assert_eq!(
        count(
            "MATCH (m:Memory {tenant: $tenant}) WHERE m.text CONTAINS '€40' RETURN count(m) AS n"
        )
        .await,
        0,
        "the replaced version's statements are gone"
    );
}
