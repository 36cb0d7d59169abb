//! `epigraph ingest caldav`: a real CalDAV server (Radicale, from the venv that
//! deploy/local/python.sh makes) followed through sync tokens — first sync, nothing twice, an
//! edit, a removed object tombstoned, refused credentials, the server lost and found again while
//! following — and the events through `run` into Neo4j.

use std::process::Stdio;
use std::time::{Duration, Instant};

use epigraph_schemas::{Op, SourceKind, decode_event};
use epigraph_sources::kafka::{EventConsumer, KafkaConfig, Polled};
use epigraph_tests::servers::{Radicale, free_port};
use epigraph_tests::{
    TestEnv, http_delete, last_json_line, metric_sample, scrape_metrics, serial, unique_tenant,
};

const USER: &str = "alice";
const PASSWORD: &str = "pw-caldav-7Qx";

/// A WebDAV request as alice (blocking, off the async workers).
fn dav(method: &str, url: &str, body: Option<String>) -> u16 {
    tokio::task::block_in_place(|| dav_blocking(method, url, body))
}

fn dav_blocking(method: &str, url: &str, body: Option<String>) -> u16 {
    let client = reqwest::blocking::Client::new();
    let mut request = client
        .request(reqwest::Method::from_bytes(method.as_bytes()).unwrap(), url)
        .basic_auth(USER, Some(PASSWORD));
    if let Some(body) = body {
        request = request
            .header("Content-Type", "text/calendar; charset=utf-8")
            .body(body);
    }
    request.send().expect("radicale answers").status().as_u16()
}

fn vevent(uid: &str, start: &str, summary: &str, description: &str, extra: &str) -> String {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//epigraph tests//EN\r\nBEGIN:VEVENT\r\n\
         UID:{uid}\r\nDTSTAMP:20261201T000000Z\r\nDTSTART:{start}\r\nDURATION:PT1H\r\n\
         SUMMARY:{summary}\r\nDESCRIPTION:{description}\r\n\
         ORGANIZER;CN=Maria Lopez:mailto:maria@acme.example\r\n{extra}END:VEVENT\r\nEND:VCALENDAR\r\n"
    )
}

/// `(source_id, op, body)` of every calendar event of the tenant on the topic so far.
async fn calendar_events(env: &TestEnv) -> Vec<(String, Op, String)> {
    let config = KafkaConfig {
        group_id: unique_tenant("tests-caldav"),
        ..env.kafka.clone()
    };
    let consumer =
        EventConsumer::from_beginning(&config, &[config.events_topic(SourceKind::Calendar)])
            .expect("consumer");
    let mut out = Vec::new();
    while let Polled::Message(message) = consumer.poll(Duration::from_secs(3)).await.expect("poll")
    {
        if let Some(payload) = message.payload.as_deref()
            && let Ok(event) = decode_event(payload)
            && event.tenant == env.tenant
        {
            out.push((event.source_id, event.op, event.body));
        }
    }
    out
}

fn ingest_caldav(env: &TestEnv, url: &str, password: &str) -> std::process::Output {
    env.command(&[
        "ingest",
        "caldav",
        url,
        "--tenant",
        &env.tenant,
        "--window-start",
        "2026-01-01",
        "--window-end",
        "2028-01-01",
    ])
    .env("EPIGRAPH_CALDAV__USERNAME", USER)
    .env("EPIGRAPH_CALDAV__PASSWORD", password)
    .output()
    .expect("spawning epigraph")
}

fn synced(env: &TestEnv, url: &str) -> serde_json::Value {
    let output = ingest_caldav(env, url, PASSWORD);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        !stdout.contains(PASSWORD) && !stderr.contains(PASSWORD),
        "the password leaked: {stdout}\n{stderr}"
    );
    last_json_line(&stdout)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_calendar_server_is_followed_by_sync_token_with_edits_removals_and_outages() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-caldav");
    let server = Radicale::start(tempfile::tempdir().unwrap(), free_port(), USER, PASSWORD);
    let url = server.collection();
    assert_eq!(dav("MKCALENDAR", &url, None), 201);
    let budget = format!("{url}budget.ics");
    let weekly = format!("{url}weekly.ics");
    assert_eq!(
        dav(
            "PUT",
            &budget,
            Some(vevent(
                "budget-1",
                "20260303T090000Z",
                "Budget review",
                "We decided to cut the cloud budget by 10%.",
                ""
            ))
        ),
        201
    );
    assert_eq!(
        dav(
            "PUT",
            &weekly,
            Some(vevent(
                "sync-1",
                "20260105T090000Z",
                "Atlas sync",
                "Weekly status of the Atlas launch.",
                "RRULE:FREQ=WEEKLY;COUNT=3\r\n"
            ))
        ),
        201
    );

    // First sync: the whole collection, one event per occurrence.
    let first = synced(&env, &url);
    assert_eq!(first["full_sync"], true, "{first}");
    assert_eq!(first["fetched"], 2, "{first}");
    assert_eq!(first["published"], 4, "{first}");
    // Nothing changed: nothing fetched, nothing published, and the token was used.
    let again = synced(&env, &url);
    assert_eq!(
        (&again["full_sync"], &again["fetched"], &again["published"]),
        (&false.into(), &0.into(), &0.into()),
        "{again}"
    );

    // An edit and a removal reach the topic: one new version, three tombstones.
    assert_eq!(
        dav(
            "PUT",
            &budget,
            Some(vevent(
                "budget-1",
                "20260303T090000Z",
                "Budget review",
                "We decided to cut the cloud budget by 15%.",
                ""
            ))
        ),
        204,
        "an existing object is replaced"
    );
    assert_eq!(dav("DELETE", &weekly, None), 200);
    let third = synced(&env, &url);
    assert_eq!(
        (
            &third["fetched"],
            &third["removed"],
            &third["published"],
            &third["tombstoned"]
        ),
        (&1.into(), &1.into(), &1.into(), &3.into()),
        "{third}"
    );
    let events = calendar_events(&env).await;
    let budget_bodies: Vec<&str> = events
        .iter()
        .filter(|e| e.0 == "ics/budget-1")
        .map(|e| e.2.as_str())
        .collect();
    assert_eq!(budget_bodies.len(), 2, "{events:#?}");
    assert!(budget_bodies[1].contains("15%"), "{events:#?}");
    let tombstones: Vec<&str> = events
        .iter()
        .filter(|e| e.1 == Op::Delete)
        .map(|e| e.0.as_str())
        .collect();
    assert_eq!(tombstones.len(), 3, "{events:#?}");
    assert!(
        tombstones.iter().all(|id| id.starts_with("ics/sync-1/")),
        "{tombstones:?}"
    );

    // Refused credentials: a clear error, a failing exit, never the password.
    let refused = ingest_caldav(&env, &url, "not-the-password");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(stderr.contains("refused access"), "{stderr}");
    assert!(!stderr.contains("not-the-password"), "{stderr}");

    // Following: a new event appears; the server goes away and comes back; the next one too.
    // The query service's health page lists the follower from its reports on
    // `<prefix>.connectors`.
    let serve = env.serve();
    let connector = |serve: &epigraph_tests::Server| {
        let listed = serve.get(&format!("/v1/connectors?tenant={}", env.tenant));
        listed["connectors"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["source"] == "caldav")
            .cloned()
            .unwrap_or_default()
    };
    let wait_state = |serve: &epigraph_tests::Server, state: &str| {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let seen = connector(serve);
            if seen["state"] == state {
                return seen;
            }
            assert!(
                Instant::now() < deadline,
                "the connector never showed {state}: {seen}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    // The refused one-shot read above reported its end and why.
    let stopped = wait_state(&serve, "stopped");
    assert!(
        stopped["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("refused access") && !e.contains("not-the-password")),
        "{stopped}"
    );
    let metrics_addr = format!("127.0.0.1:{}", free_port());
    let mut follower = env
        .command(&[
            "ingest",
            "caldav",
            &url,
            "--tenant",
            &env.tenant,
            "--follow",
            "--metrics-listen",
            &metrics_addr,
        ])
        .env("EPIGRAPH_CALDAV__USERNAME", USER)
        .env("EPIGRAPH_CALDAV__PASSWORD", PASSWORD)
        .env("EPIGRAPH_CALDAV__POLL_INTERVAL_MS", "300")
        .env("EPIGRAPH_CALDAV__MAX_BACKOFF_MS", "2000")
        .env("EPIGRAPH_SOURCES__REPORT_EVERY_MS", "1000")
        .env("EPIGRAPH_ICS__WINDOW_START", "2026-01-01")
        .env("EPIGRAPH_ICS__WINDOW_END", "2028-01-01")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning the follower");
    let wait_for = |id: &'static str| {
        let env = &env;
        async move {
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                let events = calendar_events(env).await;
                if events.iter().any(|e| e.0 == id) {
                    return events;
                }
                assert!(Instant::now() < deadline, "{id} never arrived: {events:#?}");
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        }
    };
    let offsite = vevent(
        "offsite-1",
        "20260410T080000Z",
        "Offsite planning",
        "Open question: who books the venue?",
        "",
    );
    assert_eq!(dav("PUT", &format!("{url}offsite.ics"), Some(offsite)), 201);
    wait_for("ics/offsite-1").await;
    let up = |addr: &str| {
        scrape_metrics(addr).and_then(|text| metric_sample(&text, "epigraph_source_up{"))
    };
    assert_eq!(
        up(&metrics_addr),
        Some(1.0),
        "the follower reports its server up"
    );
    let (dir, port) = server.stop();
    // The outage shows in /metrics: up 0, failed syncs counted, a backoff set.
    let deadline = Instant::now() + Duration::from_secs(30);
    while up(&metrics_addr) != Some(0.0) {
        assert!(
            Instant::now() < deadline,
            "the outage never showed in /metrics"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let text = scrape_metrics(&metrics_addr).unwrap();
    let failed = text
        .lines()
        .find(|l| l.starts_with("epigraph_source_syncs_total{") && l.contains("outcome=\"error\""))
        .unwrap_or_else(|| panic!("no failed syncs counted: {text}"));
    assert!(!failed.ends_with(" 0"), "{failed}");
    assert!(
        metric_sample(&text, "epigraph_source_retry_in_seconds{").unwrap() >= 1.0,
        "{text}"
    );
    // … and on the health page: failing, with the error and the next try, never the password.
    let failing = wait_state(&serve, "failing");
    let error = failing["last_error"].as_str().unwrap_or_default();
    assert!(!error.is_empty() && !error.contains(PASSWORD), "{failing}");
    assert!(
        failing["retry_in_ms"].as_u64().unwrap() >= 1000,
        "{failing}"
    );
    assert!(failing["syncs_failed"].as_u64().unwrap() >= 1, "{failing}");
    let server = Radicale::start(dir, port, USER, PASSWORD);
    let hiring = vevent(
        "hiring-1",
        "20260412T080000Z",
        "Hiring committee",
        "We decided to hire two engineers.",
        "",
    );
    assert_eq!(dav("PUT", &format!("{url}hiring.ics"), Some(hiring)), 201);
    let events = wait_for("ics/hiring-1").await;
    assert_eq!(
        up(&metrics_addr),
        Some(1.0),
        "up again once the server answers"
    );
    let up = wait_state(&serve, "up");
    assert!(up["published"].as_u64().unwrap() >= 2, "{up}");
    assert!(up["last_error"].is_null(), "{up}");
    // A connector still reporting cannot be forgotten: it would list itself again.
    let forget = |serve: &epigraph_tests::Server, target: &str| {
        http_delete(
            &format!(
                "{}/v1/connectors?tenant={}&source=caldav&target={target}",
                serve.base, env.tenant
            ),
            None,
        )
    };
    let target = up["target"].as_str().unwrap().to_string();
    let (status, body) = forget(&serve, &target);
    assert_eq!(status, 409, "{body}");
    // Killed, it cannot say so: three report intervals without a word and it is silent.
    let _ = follower.kill();
    wait_state(&serve, "silent");
    // Silent, a reviewer may forget it: its tombstone on `<prefix>.connectors`, gone from the list.
    let (status, body) = forget(&serve, &target);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["state"], "silent", "{body}");
    assert!(
        connector(&serve).is_null(),
        "still listed: {}",
        connector(&serve)
    );
    let (status, body) = forget(&serve, &target);
    assert_eq!(status, 404, "{body}");
    let key = format!("{}/caldav/{target}", env.tenant);
    let reports = epigraph_tests::connector_reports(&env).await;
    assert!(
        !reports.contains_key(&key),
        "the topic still holds a report of {key}: its tombstone is missing"
    );
    drop(serve);
    let output = follower.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(
        log.contains("calendar sync failed"),
        "the outage is logged: {log}"
    );
    assert!(!log.contains(PASSWORD), "{log}");
    assert_eq!(
        events.iter().filter(|e| e.0 == "ics/offsite-1").count(),
        1,
        "published once across the outage: {events:#?}"
    );
    drop(server);

    // Through the pipeline: the live calendar items are sources in the graph.
    env.run_until_idle_without_vectors();
    let sources = env.source_count("Calendar").await;
    assert_eq!(
        sources, 3,
        "budget, offsite and hiring; the weekly sync was removed"
    );
}

/// A full disk under the state folder, where the follower keeps its sync token and what it
/// published (saved after the broker acknowledged, as a temporary file renamed): the sync fails
/// with the OS error naming the file, the old state is intact, and once space returns the next
/// sync sends the changes again — no-ops downstream — and saves; the one after sends nothing.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "a full disk under the state folder: needs root for the tmpfs (run with --ignored)"]
async fn a_full_disk_under_the_state_folder_fails_clearly_and_the_next_sync_resumes() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-caldav-full");
    let disk = epigraph_tests::disk::Disk::mount_sized(&env.dir.path().join("disk"), "size=16m");
    let state = disk.dir.join("state");
    let server = Radicale::start(tempfile::tempdir().unwrap(), free_port(), USER, PASSWORD);
    let url = server.collection();
    assert_eq!(dav("MKCALENDAR", &url, None), 201);
    let put = |name: &str, uid: &str, summary: &str, description: &str| {
        dav(
            "PUT",
            &format!("{url}{name}.ics"),
            Some(vevent(uid, "20260303T090000Z", summary, description, "")),
        )
    };
    assert_eq!(
        put(
            "budget",
            "budget-1",
            "Budget review",
            "We decided to cut the cloud budget by 10%."
        ),
        201
    );
    let sync = || {
        let output = env
            .command(&[
                "ingest",
                "caldav",
                &url,
                "--tenant",
                &env.tenant,
                "--window-start",
                "2026-01-01",
                "--window-end",
                "2028-01-01",
            ])
            .env("EPIGRAPH_CALDAV__USERNAME", USER)
            .env("EPIGRAPH_CALDAV__PASSWORD", PASSWORD)
            .env("EPIGRAPH_STATE_DIR", &state)
            .output()
            .expect("spawning epigraph");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        (output.status.success(), stdout, stderr)
    };
    let published = |stdout: &str| last_json_line(stdout)["published"].as_i64().unwrap_or(-1);

    let (ok, stdout, stderr) = sync();
    assert!(ok, "{stdout}\n{stderr}");
    assert_eq!(published(&stdout), 1, "{stdout}");
    let saved = epigraph_tests::disk::files_under(&state);
    assert_eq!(saved.len(), 1, "one state file: {saved:?}");
    let before = std::fs::read(&saved[0]).unwrap();

    // An edit and a new event; then the disk is full.
    assert_eq!(
        put(
            "budget",
            "budget-1",
            "Budget review",
            "We decided to cut the cloud budget by 15%."
        ),
        204
    );
    assert_eq!(
        put(
            "offsite",
            "offsite-1",
            "Offsite",
            "The offsite moves to Lisbon."
        ),
        201
    );
    let filled = disk.fill();
    let (ok, stdout, stderr) = sync();
    assert!(!ok, "a full disk went unnoticed: {stdout}\n{stderr}");
    assert_eq!(
        stderr.matches("No space left on device").count(),
        1,
        "the OS error is said once: {stderr}"
    );
    assert!(
        stderr.contains("state"),
        "the error names the file: {stderr}"
    );
    assert!(!stderr.contains(PASSWORD), "the password leaked: {stderr}");
    assert_eq!(
        std::fs::read(&saved[0]).unwrap(),
        before,
        "the old state is intact"
    );
    let full_error = stderr.lines().last().unwrap_or_default().to_string();

    // Space returns: the two changes are sent again and the state is saved; then nothing.
    disk.free();
    let (ok, stdout, stderr) = sync();
    assert!(ok, "{stdout}\n{stderr}");
    assert_eq!(published(&stdout), 2, "{stdout}");
    let (ok, stdout, stderr) = sync();
    assert!(ok, "{stdout}\n{stderr}");
    assert_eq!(published(&stdout), 0, "the state was saved: {stdout}");

    // Nothing lost, nothing doubled downstream: two events, the budget at its latest text.
    env.run_until_idle_without_vectors();
    let sources = env.source_count("Calendar").await;
    assert_eq!(sources, 2);
    let latest: Vec<String> = calendar_events(&env)
        .await
        .into_iter()
        .filter(|(id, op, _)| id.contains("budget") && *op == Op::Upsert)
        .map(|(_, _, body)| body)
        .collect();
    assert!(
        latest.last().is_some_and(|b| b.contains("15%")),
        "{latest:?}"
    );
    println!(
        "{}",
        serde_json::json!({"trial": "caldav-state-full", "filled_bytes": filled,
            "error": full_error})
    );
}
