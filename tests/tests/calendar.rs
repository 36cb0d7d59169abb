//! The real iCalendar fixtures (tests/fixtures/icalendar, from collective/icalendar, BSD)
//! through the whole path: connector → Kafka → run → Neo4j; malformed files are dead-lettered.

use std::collections::BTreeMap;
use std::path::PathBuf;

use epigraph_schemas::Op;
use epigraph_sources::ics::{IcsConfig, read_ics};
use epigraph_tests::{TestEnv, find_dead_letter, ingest, neo4j, neo4j_count, serial};

fn fixtures() -> PathBuf {
    let path = epigraph_schemas::manifest_dir!().join("fixtures/icalendar");
    assert!(path.is_dir(), "{} is missing", path.display());
    path
}

#[tokio::test(flavor = "multi_thread")]
async fn real_calendars_land_as_calendar_sources_with_their_attendees() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-ics");
    let dir = fixtures();
    let summary = ingest(
        &env,
        &[
            "ics",
            dir.to_str().unwrap(),
            "--window-start",
            "1990-01-01",
            "--window-end",
            "2040-01-01",
        ],
    );
    // What the connector reads offline decides what must be live in the graph.
    let config = IcsConfig {
        window_start: Some("1990-01-01".into()),
        window_end: Some("2040-01-01".into()),
        ..IcsConfig::default()
    };
    let scan = read_ics(&dir, &env.tenant, &config, 4096, 0).unwrap();
    assert_eq!(
        summary["dead_lettered"].as_u64(),
        Some(scan.dead_letters.len() as u64),
        "{summary}"
    );
    let mut live: BTreeMap<String, bool> = BTreeMap::new();
    for event in &scan.events {
        live.insert(event.source_id.clone(), event.op == Op::Upsert);
    }
    let expected = live.values().filter(|up| **up).count() as i64;
    assert!(expected > 100, "{expected}");

    env.run_until_idle_without_vectors();

    let graph = neo4j();
    let sources = neo4j_count(
        &graph,
        "MATCH (s:Source:Calendar {tenant: $tenant}) RETURN count(s) AS n",
        &env.tenant,
    )
    .await;
    assert_eq!(sources, expected);
    let attendees = neo4j_count(
        &graph,
        "MATCH (:Entity:Person {tenant: $tenant})-[:ATTENDS]->(:Source:Calendar) RETURN count(*) AS n",
        &env.tenant,
    )
    .await;
    assert!(
        attendees > 0,
        "attendees become people who attend: {attendees}"
    );

    let letter = find_dead_letter(&env, "broken_dtstart.ics", |l| {
        l.stage == "ics" && l.location.ends_with("broken_dtstart.ics")
    })
    .await;
    assert!(letter.reason.contains("DTSTART"), "{}", letter.reason);
}
