//! `epigraph ingest docs --watch`: a changed file is republished, an unchanged one is not, a
//! removed one is tombstoned, an HTML page is read as text — while the command keeps running.

use std::process::Stdio;
use std::time::{Duration, Instant};

use epigraph_schemas::{Op, SourceKind, decode_event};
use epigraph_sources::kafka::{EventConsumer, KafkaConfig, Polled};
use epigraph_tests::{TestEnv, serial, unique_tenant};

/// One published document event: source id, op, title, body and its `written` extra.
type Published = (String, Op, Option<String>, String, Option<String>);

/// Every event of the tenant on the document topic so far.
async fn document_events(env: &TestEnv) -> Vec<Published> {
    let config = KafkaConfig {
        group_id: unique_tenant("tests-watch"),
        ..env.kafka.clone()
    };
    let consumer =
        EventConsumer::from_beginning(&config, &[config.events_topic(SourceKind::Document)])
            .expect("consumer");
    let mut out = Vec::new();
    while let Polled::Message(message) = consumer.poll(Duration::from_secs(3)).await.expect("poll")
    {
        if let Some(payload) = message.payload.as_deref()
            && let Ok(event) = decode_event(payload)
            && event.tenant == env.tenant
        {
            // The typed per-kind record travels with every upsert.
            let path = event.document.as_ref().map(|d| d.path.clone());
            let expected = (event.op == Op::Upsert).then(|| event.source_id.clone());
            assert_eq!(path, expected, "{event:?}");
            let written = event.extras.get("written").cloned();
            out.push((event.source_id, event.op, event.title, event.body, written));
        }
    }
    out
}

async fn wait_for(
    env: &TestEnv,
    what: &str,
    done: impl Fn(&[Published]) -> bool,
) -> Vec<Published> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let events = document_events(env).await;
        if done(&events) {
            return events;
        }
        assert!(Instant::now() < deadline, "{what}: {events:#?}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn watching_a_folder_publishes_changes_and_removals() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-watch");
    let docs = env.docs();
    std::fs::write(docs.join("plan.md"), "# Plan\n\nWe ship Atlas in May.\n").unwrap();
    std::fs::write(docs.join("still.md"), "# Still\n\nNothing changes here.\n").unwrap();
    std::fs::write(
        docs.join("page.html"),
        "<html><head><title>Pricing page</title><style>p{}</style></head>\
         <body><h1>Pricing</h1><p>The price is <b>€40</b> per seat.</p></body></html>",
    )
    .unwrap();
    let mut child = env
        .command(&[
            "ingest",
            "docs",
            docs.to_str().unwrap(),
            "--tenant",
            &env.tenant,
            "--watch",
            "--interval-ms",
            "300",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawning the watcher");

    let first = wait_for(&env, "the first pass", |e| e.len() >= 3).await;
    let page = first
        .iter()
        .find(|e| e.0 == "page.html")
        .expect("the HTML page");
    assert_eq!(page.2.as_deref(), Some("Pricing page"));
    assert!(
        page.3.contains("The price is €40 per seat.") && !page.3.contains('<'),
        "{}",
        page.3
    );

    std::fs::write(docs.join("plan.md"), "# Plan\n\nWe ship Atlas in June.\n").unwrap();
    std::fs::remove_file(docs.join("page.html")).unwrap();
    let after = wait_for(&env, "the edit and the removal", |e| {
        e.iter().any(|x| x.3.contains("June"))
            && e.iter().any(|x| x.0 == "page.html" && x.1 == Op::Delete)
    })
    .await;
    let _ = child.kill();
    let _ = child.wait();
    let still = after.iter().filter(|e| e.0 == "still.md").count();
    assert_eq!(still, 1, "an unchanged file is published once: {after:#?}");
    let plans: Vec<&Published> = after.iter().filter(|e| e.0 == "plan.md").collect();
    assert_eq!(plans.len(), 2, "{after:#?}");
    // The edit says which lines it kept: "# Plan\n\n" (8 characters) was written with the first
    // version, the rest with the edit.
    assert_eq!(plans[0].4, None, "a new file was written at once");
    let written = plans[1]
        .4
        .as_deref()
        .expect("the edit carries written spans");
    let spans: Vec<&str> = written.split(';').collect();
    assert_eq!(spans.len(), 2, "{written}");
    assert!(
        spans[0].starts_with("0-8@") && spans[1].starts_with("8-31@"),
        "{written}"
    );
    let at = |span: &str| span.split_once('@').unwrap().1.parse::<i64>().unwrap();
    assert!(at(spans[0]) < at(spans[1]), "{written}");
}
