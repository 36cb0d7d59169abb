//! The dashboard's live feed against the real stores: `GET /v1/dashboard/stream` pushes a
//! snapshot at once, pushes another when the pipeline writes a change (a contradiction
//! arriving; the pipeline's change notice on Kafka wakes the feed, which does not poll here), checks tokens and parameters like the other reads, and ends when the server
//! shuts down gracefully.

use std::sync::mpsc;
use std::time::Duration;

use epigraph_tests::corpus::{MEMO, PLANNED, QUESTION, SHEET, event};
use epigraph_tests::{TestEnv, ingest, last_json_line, open_event_stream as open, serial};

fn texts(items: &serde_json::Value) -> Vec<String> {
    items
        .as_array()
        .expect("an array")
        .iter()
        .map(|m| m["text"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_dashboard_stream_pushes_changes_and_ends_on_shutdown() {
    let _guard = serial().await;
    let env = TestEnv::new("live");
    let tenant = env.tenant.clone();
    let first = env.dir.path().join("first.jsonl");
    let lines = [
        event("chat", "atlas/1", 0, PLANNED),
        event("chat", "ask/1", 3, QUESTION),
    ];
    std::fs::write(&first, lines.join("\n") + "\n").expect("events");
    ingest(&env, &["events", first.to_str().expect("utf-8")]);
    let report = last_json_line(&env.epigraph(&["run", "--until-idle"]));
    assert_eq!(report["live_sources"], 2, "{report}");

    let config = env.dir.path().join("serve.toml");
    std::fs::write(
        &config,
        format!(
            "[[serve.tokens]]\ntoken = \"token-a\"\ntenant = \"{tenant}\"\n\n\
             [serve]\nreport_usage = false\nlive_poll_ms = 600000\n"
        ),
    )
    .expect("config");
    let server = env.serve_with(&["--config", config.to_str().expect("utf-8")]);
    let url = |query: &str| format!("{}/v1/dashboard/stream{query}", server.base);

    // Like every read: a token is needed, and parameters are checked.
    assert_eq!(open(url(""), "wrong").0, 401);
    assert_eq!(open(url("?types=VERDICT"), "token-a").0, 400);

    // A snapshot at once: the open question and the priorities with their terms.
    let (status, events) = open(url("?top=10&limit=10"), "token-a");
    assert_eq!(status, 200);
    let (name, snapshot) = events
        .recv_timeout(Duration::from_secs(30))
        .expect("a first snapshot");
    assert_eq!(name, "snapshot", "{snapshot}");
    assert!(
        texts(&snapshot["questions"]).contains(&QUESTION.to_string()),
        "{snapshot}"
    );
    assert!(snapshot["contradictions"].as_array().unwrap().is_empty());
    let priorities = snapshot["priorities"].as_array().unwrap();
    assert!(!priorities.is_empty(), "{snapshot}");
    for card in priorities {
        let (k, s) = (card["k"].as_f64(), card["k_terms"]["s"].as_f64());
        assert!(k.is_some() && s.is_some(), "K and its terms: {card}");
    }
    let first_seq = snapshot["seq"].as_u64().expect("seq");

    // Nothing changes: nothing is pushed.
    assert!(events.recv_timeout(Duration::from_millis(1_500)).is_err());

    // A contradiction arrives through Kafka and the pipeline: it is pushed without asking. The
    // feed polls only every ten minutes here, so what brings it is the pipeline's change notice
    // (the changes topic) telling the server this tenant changed.
    let second = env.dir.path().join("second.jsonl");
    let lines = [
        event("document", "term-sheet", 4, SHEET),
        event("email", "memo", 6, MEMO),
    ];
    std::fs::write(&second, lines.join("\n") + "\n").expect("events");
    ingest(&env, &["events", second.to_str().expect("utf-8")]);
    let report = last_json_line(&env.epigraph(&["run", "--until-idle"]));
    assert_eq!(report["live_sources"], 4, "{report}");
    let pushed = loop {
        let (name, snapshot) = events
            .recv_timeout(Duration::from_secs(30))
            .expect("the change is pushed");
        assert_eq!(name, "snapshot", "{snapshot}");
        assert!(snapshot["seq"].as_u64().unwrap() > first_seq);
        if !snapshot["contradictions"].as_array().unwrap().is_empty() {
            break snapshot;
        }
    };
    let pair = &pushed["contradictions"][0];
    let mut sides = vec![
        pair["a"]["text"].as_str().unwrap().to_string(),
        pair["b"]["text"].as_str().unwrap().to_string(),
    ];
    sides.sort();
    assert_eq!(sides, [MEMO, SHEET], "{pushed}");

    // A second viewer of the same view gets the current snapshot at once.
    let (_, again) = open(url("?top=10&limit=10"), "token-a");
    let (_, current) = again
        .recv_timeout(Duration::from_secs(30))
        .expect("the current snapshot");
    assert_eq!(current["seq"], pushed["seq"], "{current}");

    // A graceful shutdown ends the open streams instead of waiting for them.
    let status = server
        .terminate(Duration::from_secs(20))
        .expect("serve exits with streams open");
    assert!(status.success(), "{status}");
    loop {
        match events.recv_timeout(Duration::from_secs(5)) {
            Ok(_) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => panic!("the stream did not end"),
        }
    }
}
