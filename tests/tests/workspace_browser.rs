//! The analyst workspace in real headless Chromium (Debian's `chromium`, driven by
//! playwright-core: `tests/browser/workspace.mjs`) against the real stores: a generated
//! organisation plus a superseded plan goes events → Kafka → run → Neo4j + LanceDB, `epigraph
//! serve` serves the workspace, and the browser checks that every page renders real data, that
//! the as-of control shows the superseded plan as current before its successor was written,
//! that a plan past its date that a later message reports done is folded apart with that
//! message, that a contradicting source ingested while the Contradictions page is open appears
//! there, marked, without a reload, and — where the server takes reviews — that rejecting it
//! removes it from the page, from `/v1/contradictions` and from Neo4j, and withdrawing brings it
//! back.
//! Screenshots of every page are written to `<target dir>/browser-artifacts/`.
//!
//! Skips, loudly, only when no chromium (or node) can be found; `deploy/local/test.sh` installs
//! both, so CI runs it.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use epigraph_tests::corpus::{DAY, MEMO, PLANNED, QUESTION, SHEET, SLIPPED, T0, authored, event};
use epigraph_tests::{TestEnv, ingest, last_json_line, neo4j, serial};

fn repo() -> PathBuf {
    epigraph_schemas::manifest_dir!()
        .parent()
        .expect("repo root")
        .to_path_buf()
}

/// The chromium to drive: `$CHROMIUM`, else the first of Debian's names on the `PATH`.
fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CHROMIUM").map(PathBuf::from) {
        return path.is_file().then_some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|p| p.is_file())
}

/// `npm ci` in tests/browser unless playwright-core is there already.
fn browser_deps(dir: &Path) -> bool {
    if dir
        .join("node_modules/playwright-core/package.json")
        .is_file()
    {
        return true;
    }
    Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(dir)
        .status()
        .is_ok_and(|s| s.success())
}

/// Where the screenshots go.
fn artifacts() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target"));
    target.join("browser-artifacts").join("workspace")
}

/// Standing `CONTRADICTS` edges between two memory ids in Neo4j.
async fn contradicts_edges(tenant: &str, a: &str, b: &str) -> i64 {
    let graph = neo4j();
    let mut rows = graph
        .execute(
            neo4rs::query(
                "MATCH (x {tenant: $tenant, id: $a})-[r:CONTRADICTS]-(y {tenant: $tenant, id: $b}) \
                 WHERE r.t_invalid IS NULL RETURN count(r) AS n",
            )
            .param("tenant", tenant)
            .param("a", a)
            .param("b", b),
        )
        .await
        .expect("neo4j query");
    let row = rows.next().await.expect("neo4j row").expect("a count");
    row.get::<i64>("n").expect("n")
}

fn pair_listed(server: &epigraph_tests::Server, tenant: &str, a: &str, b: &str) -> bool {
    let body = server.get(&format!("/v1/contradictions?tenant={tenant}&limit=200"));
    body["contradictions"]
        .as_array()
        .expect("contradictions")
        .iter()
        .any(|p| {
            let (x, y) = (p["a"]["id"].as_str(), p["b"]["id"].as_str());
            (x, y) == (Some(a), Some(b)) || (x, y) == (Some(b), Some(a))
        })
}

#[tokio::test(flavor = "multi_thread")]
async fn the_workspace_renders_every_page_live_in_headless_chromium() {
    let browser_dir = repo().join("tests/browser");
    let Some(chromium) = chromium() else {
        eprintln!(
            "\n\n!!!!!!!! SKIPPED: no chromium on the PATH (nor $CHROMIUM): the workspace's browser \
             test did not run. Install it with deploy/local/setup.sh (apt-get install chromium).\n\n"
        );
        return;
    };
    assert!(
        browser_deps(&browser_dir),
        "npm ci in tests/browser failed (playwright-core is pinned in its package-lock.json)"
    );

    let _guard = serial().await;
    let env = TestEnv::new("ui");
    let tenant = env.tenant.clone();
    // A generated organisation, and a plan that slipped (day 0, superseded on day 8).
    let corpus = env.dir.path().join("corpus");
    let summary = last_json_line(&env.epigraph(&[
        "gen",
        corpus.to_str().expect("utf-8"),
        "--seed",
        "7",
        "--scale",
        "120",
    ]));
    assert_eq!(summary["events"], 120, "{summary}");
    ingest(
        &env,
        &[
            "events",
            corpus.join("events.jsonl").to_str().expect("utf-8"),
        ],
    );
    let ours = env.dir.path().join("ours.jsonl");
    let lines = [
        event("chat", "atlas/1", 0, PLANNED),
        event("chat", "atlas/2", 8, SLIPPED),
        event("chat", "ask/1", 3, QUESTION),
        // A plan past its date that a later message reports done.
        event(
            "chat",
            "harbor/1",
            1,
            "We plan to ship the Harbor billing export by June 10, 2026.",
        ),
        event(
            "chat",
            "harbor/2",
            20,
            "The Harbor billing export shipped to every customer.",
        ),
        // A plan a later statement carries out (an IMPLEMENTS edge the lifecycle rule draws):
        // reported done, with the edge among the plan's grounds for a reviewer to judge.
        event(
            "chat",
            "export/1",
            5,
            "The ``legacy_export`` endpoint will be removed by June 20, 2026.",
        ),
        event(
            "chat",
            "export/2",
            30,
            "The ``legacy_export`` endpoint is no longer available.",
        ),
        // A question and its answer, for the Answered list and its Reopen button.
        event("chat", "bw/q", 1, "Who owns the BlueWave renewal?"),
        event("chat", "bw/x", 2, "The BlueWave renewal call went long."),
        authored(
            "chat",
            "bw/a",
            4,
            "Mateo Rossi will own the BlueWave renewal.",
            Some("Mateo Rossi"),
        ),
        // The same person under an initial and the same address: an identity link with its
        // evidence on the entity page, and "Not the same" splits it.
        serde_json::json!({
            "kind": "chat", "source_id": "bw/b", "op": "upsert", "title": "bw/b",
            "body": "M. Rossi has moved the BlueWave renewal call to Thursday.",
            "occurred_at": T0 + 5 * DAY,
            "authors": [{"name": "M. Rossi", "address": "mateo.rossi@acme.example"}],
        })
        .to_string(),
        // Refused by the connector: a dead letter for the health page.
        r#"{"kind": "fax", "source_id": "fax/1", "body": "a fax"}"#.to_string(),
    ];
    std::fs::write(&ours, lines.join("\n") + "\n").expect("events");
    ingest(&env, &["events", ours.to_str().expect("utf-8")]);
    // A topic another system writes, read once by its connector: its last report is listed on
    // the health page.
    let upstream = format!("{}.upstream.notes", env.kafka.topic_prefix);
    let config = env.dir.path().join("serve.toml");
    std::fs::write(
        &config,
        format!(
            "[serve]\nreport_usage = false\nlive_poll_ms = 2000\n[governance]\nperson = \"approval\"\n\
             [[sources.topic]]\nname = \"crm-notes\"\ntopic = \"{upstream}\"\ntenant = \"{}\"\n\
             kind = \"document\"\nsource_id = \"/id\"\nsource_id_prefix = \"crm/\"\nbody = \"/text\"\n",
            env.tenant
        ),
    )
    .expect("config");
    let config = config.to_str().expect("utf-8");
    let producer = epigraph_sources::kafka::EventProducer::new(&env.kafka).expect("producer");
    producer
        .publish_raw(
            &upstream,
            "n1",
            br#"{"id": "n1", "text": "The CRM export job runs every night."}"#,
        )
        .await
        .expect("an upstream record");
    let read = last_json_line(&env.epigraph(&["--config", config, "ingest", "topic", "crm-notes"]));
    assert_eq!(read["published"], 1, "{read}");
    let report = env.run_until_idle();
    assert!(
        report["live_sources"].as_u64().unwrap_or(0) > 100,
        "{report}"
    );

    // Development mode (no tokens, loopback): the page names its tenant in the URL.
    let server = env.serve_with(&["--config", config]);

    // The page and its files come from the binary; nothing from another host.
    let page = reqwest::get(format!("{}/workspace", server.base))
        .await
        .expect("GET /workspace")
        .text()
        .await
        .expect("page");
    assert!(
        page.contains("/ui/app.js") && !page.contains("://"),
        "{page}"
    );
    for file in [
        "app.js",
        "vendor/cytoscape.min.js",
        "vendor/uPlot.iife.min.js",
    ] {
        let response = reqwest::get(format!("{}/ui/{file}", server.base))
            .await
            .expect("GET /ui");
        assert_eq!(response.status(), 200, "/ui/{file}");
    }

    let out = artifacts();
    let _ = std::fs::remove_dir_all(&out);
    let mut child = Command::new("node")
        .arg(browser_dir.join("workspace.mjs"))
        .arg(&server.base)
        .arg(&out)
        .env("CHROMIUM", &chromium)
        .env("EPIGRAPH_TENANT", &tenant)
        .env("EPIGRAPH_SUBJECT", "Atlas")
        .env("EPIGRAPH_PLANNED", PLANNED)
        .env("EPIGRAPH_SLIPPED", SLIPPED)
        .env(
            "EPIGRAPH_BEFORE",
            // Day 4, between the plan (day 0) and its slip (day 8), as RFC 3339.
            chrono_free_rfc3339(T0 + 4 * DAY),
        )
        .env("EPIGRAPH_NEW_PAIR", MEMO)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("node (install nodejs)");
    // A browser that hangs must not hang the suite: node is killed after 15 minutes.
    let finished = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let (finished, pid) = (finished.clone(), child.id().to_string());
        std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(900);
            while Instant::now() < deadline {
                if finished.load(Ordering::SeqCst) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(500));
            }
            eprintln!("the browser test ran over 15 minutes: killing node {pid}");
            let _ = Command::new("kill").args(["-9", &pid]).status();
        })
    };
    let mut to_node = child.stdin.take().expect("stdin");
    let from_node = BufReader::new(child.stdout.take().expect("stdout"));
    let mut steps = Vec::new();
    let mut done = None;
    let mut rejected_checked = false;
    for line in from_node.lines() {
        let line = line.expect("a line from node");
        println!("browser: {line}");
        if let Some(what) = line.strip_prefix("WAIT ") {
            let mut words = what.split_whitespace();
            match words.next() {
                Some("ingest-contradiction") => {
                    let file = env.dir.path().join("contradiction.jsonl");
                    let lines = [
                        event("document", "term-sheet", 4, SHEET),
                        event("email", "memo", 6, MEMO),
                    ];
                    std::fs::write(&file, lines.join("\n") + "\n").expect("events");
                    ingest(&env, &["events", file.to_str().expect("utf-8")]);
                    env.run_until_idle();
                }
                Some("pipeline") => {
                    env.run_until_idle();
                }
                Some("check-rejected") => {
                    let (a, b) = (words.next().expect("a"), words.next().expect("b"));
                    assert!(
                        !pair_listed(&server, &tenant, a, b),
                        "a rejected pair is still in /v1/contradictions"
                    );
                    assert_eq!(
                        contradicts_edges(&tenant, a, b).await,
                        0,
                        "a rejected pair is still in Neo4j"
                    );
                    rejected_checked = true;
                }
                other => panic!("the browser asked for {other:?}"),
            }
            writeln!(to_node, "go").expect("answering node");
        } else if let Some(json) = line.strip_prefix("STEP ") {
            steps.push(serde_json::from_str::<serde_json::Value>(json).expect("a step"));
        } else if let Some(json) = line.strip_prefix("DONE ") {
            done = Some(serde_json::from_str::<serde_json::Value>(json).expect("done"));
        }
    }
    let status = child.wait().expect("node exits");
    finished.store(true, Ordering::SeqCst);
    watchdog.join().expect("watchdog");
    assert!(
        status.success(),
        "the browser test failed ({status}); screenshots in {}",
        out.display()
    );
    let done = done.expect("the browser reported DONE");
    let names: Vec<&str> = steps.iter().filter_map(|s| s["step"].as_str()).collect();
    assert_eq!(
        names,
        [
            "priorities",
            "questions",
            "entity",
            "identity",
            "timeline",
            "contradiction-live",
            "reviews",
            "health",
            "proposals"
        ],
        "{steps:?}"
    );
    for page in [
        "priorities",
        "questions",
        "grounds-confirmed",
        "plan-reading-rejected",
        "entity",
        "entity-identity",
        "timeline",
        "timeline-as-of",
        "priorities-as-of",
        "contradictions",
        "contradictions-new",
        "reviews",
        "health",
        "proposals",
        "phone-priorities",
        "phone-contradictions",
    ] {
        let shot = out.join(format!("{page}.png"));
        let size = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
        assert!(size > 5_000, "screenshot {} ({size} bytes)", shot.display());
    }
    let questions = steps
        .iter()
        .find(|s| s["step"] == "questions")
        .expect("questions step");
    assert_eq!(
        questions["grounds"],
        "confirmed, withdrawn, rejected, late again; a words reading rejected and withdrawn",
        "{questions}"
    );
    let reviews = steps
        .iter()
        .find(|s| s["step"] == "reviews")
        .expect("reviews step");
    if reviews["status"] == 200 {
        assert!(rejected_checked, "{done}");
        assert!(
            pair_listed_after_withdraw(&server, &tenant, &steps),
            "withdrawn: the pair is back in /v1/contradictions"
        );
    } else {
        eprintln!(
            "\n!!!!!!!! the server has no /v1/reviews yet ({}): reject/withdraw were not exercised\n",
            reviews["status"]
        );
    }
    // serve counted what the browser asked for.
    let metrics = reqwest::get(format!("{}/metrics", server.base))
        .await
        .expect("GET /metrics")
        .text()
        .await
        .expect("metrics");
    assert!(
        metrics.contains(r#"route="/v1/dashboard/stream""#)
            && metrics.contains("epigraph_serve_request_seconds_bucket"),
        "{metrics}"
    );
}

fn pair_listed_after_withdraw(
    server: &epigraph_tests::Server,
    tenant: &str,
    steps: &[serde_json::Value],
) -> bool {
    let pair = steps
        .iter()
        .find(|s| s["step"] == "contradiction-live")
        .and_then(|s| s["pair"].as_str())
        .expect("the live pair");
    let (a, b) = pair.split_once('|').expect("a|b");
    pair_listed(server, tenant, a, b)
}

/// `ms` since the Unix epoch as RFC 3339 (UTC, whole seconds).
fn chrono_free_rfc3339(ms: i64) -> String {
    let rest = ms.div_euclid(1000).rem_euclid(86_400);
    let (year, month, day) = epigraph_schemas::calendar::civil_date(ms);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[test]
fn rfc3339_of_milliseconds() {
    assert_eq!(chrono_free_rfc3339(0), "1970-01-01T00:00:00Z");
    assert_eq!(chrono_free_rfc3339(T0), "2026-05-28T20:26:40Z");
}
