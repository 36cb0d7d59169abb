//! `epigraph ingest topic`: a real Kafka Connect worker (standalone, the FileStreamSource
//! connector that ships with Kafka, JsonConverter with schemas) writes Debezium-shaped change
//! events into a topic; `[[sources.topic]]` maps them — creates, an update, a delete, a bad
//! record dead-lettered — and the graph ends with what upstream holds.

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use epigraph_sources::kafka::{EventConsumer, KafkaConfig};
use epigraph_tests::{
    TestEnv, find_dead_letter, last_json_line, neo4j, neo4j_count, serial, unique_tenant,
};

/// A standalone Kafka Connect worker; killed when dropped.
struct Connect(Child);

impl Drop for Connect {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_connect(dir: &std::path::Path, file: &std::path::Path, topic: &str) -> Connect {
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
             value.converter=org.apache.kafka.connect.json.JsonConverter\n\
             value.converter.schemas.enable=true\n\
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
    let connect = start_connect(env.dir.path(), &changes, &topic);

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
    let letter = find_dead_letter(&env, "the row without text", |l| {
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
