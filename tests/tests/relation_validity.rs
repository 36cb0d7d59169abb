//! Entity relations that end, through the whole path: "Maya Chen now reports to Ana Silva"
//! ends her reporting line to Tom Baker in Neo4j (`t_invalid`), `/v1/traverse` follows only the
//! line in force now (or at `as_of`), and `/v1/entities` shows either all relations or those of
//! an instant.

use epigraph_tests::corpus::{DAY, T0, authored as event};
use epigraph_tests::{TestEnv, ingest, serial};

fn publish(env: &TestEnv, name: &str, lines: &[String]) {
    let file = env.dir.path().join(name);
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    ingest(env, &["events", file.to_str().unwrap()]);
}

/// The names at the end of each path.
fn ends(answer: &serde_json::Value) -> Vec<String> {
    let mut names: Vec<String> = answer["paths"]
        .as_array()
        .expect("paths")
        .iter()
        .map(|p| {
            let last = p.as_array().expect("path").last().expect("a node");
            last["properties"]["name"]
                .as_str()
                .unwrap_or("?")
                .to_string()
        })
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_reporting_line_ends_the_old_one_and_traversal_follows_the_current_one() {
    let _guard = serial().await;
    let env = TestEnv::new("relation-validity");
    let tenant = env.tenant.clone();
    publish(
        &env,
        "org.jsonl",
        &[
            event(
                "document",
                "org-chart",
                1,
                "Maya Chen reports to Tom Baker.",
                None,
            ),
            event(
                "document",
                "atlas",
                1,
                "Maya Chen works on the Atlas project.",
                None,
            ),
        ],
    );
    env.run_until_idle();
    publish(
        &env,
        "reorg.jsonl",
        &[
            event(
                "email",
                "reorg",
                5,
                "From Monday Maya Chen now reports to Ana Silva.",
                None,
            ),
            event(
                "chat",
                "farewell",
                7,
                "Maya Chen left the Atlas project, thanks for everything!",
                None,
            ),
        ],
    );
    env.run_until_idle();

    let server = env.serve();
    let now = server.get(&format!(
        "/v1/traverse?tenant={tenant}&from=Maya%20Chen&path=REPORTS_TO"
    ));
    assert_eq!(ends(&now), ["Ana Silva"], "{now}");
    let before = T0 + 3 * DAY;
    let then = server.get(&format!(
        "/v1/traverse?tenant={tenant}&from=Maya%20Chen&path=REPORTS_TO&as_of={before}"
    ));
    assert_eq!(ends(&then), ["Tom Baker"], "{then}");
    let all = server.get(&format!(
        "/v1/traverse?tenant={tenant}&from=Maya%20Chen&path=REPORTS_TO&include_ended=true"
    ));
    assert_eq!(ends(&all), ["Ana Silva", "Tom Baker"], "{all}");
    let on_atlas = server.get(&format!(
        "/v1/traverse?tenant={tenant}&from=Atlas&path=%3CWORKS_ON"
    ));
    assert_eq!(
        ends(&on_atlas),
        Vec::<String>::new(),
        "she left: {on_atlas}"
    );

    // The entity shows every relation, the ended ones with their end; as of an instant, only
    // those valid then.
    let card = |query: &str| {
        let answer = server.get(&format!(
            "/v1/entities?tenant={tenant}&name=Maya%20Chen&exact=true{query}"
        ));
        answer["entities"][0]["relations"]
            .as_array()
            .expect("relations")
            .iter()
            .map(|r| {
                (
                    r["type"].as_str().unwrap().to_string(),
                    r["name"].as_str().unwrap().to_string(),
                    r["t_invalid"].as_i64(),
                )
            })
            .collect::<std::collections::BTreeSet<_>>()
    };
    let everything = card("");
    assert!(
        everything.contains(&("REPORTS_TO".into(), "Tom Baker".into(), Some(T0 + 5 * DAY))),
        "{everything:?}"
    );
    assert!(
        everything.contains(&("REPORTS_TO".into(), "Ana Silva".into(), None)),
        "{everything:?}"
    );
    assert!(
        everything.contains(&("WORKS_ON".into(), "Atlas".into(), Some(T0 + 7 * DAY))),
        "{everything:?}"
    );
    assert!(
        everything.contains(&("LEFT".into(), "Atlas".into(), None)),
        "{everything:?}"
    );
    let at_day_3 = card(&format!("&as_of={before}"));
    assert!(
        at_day_3.contains(&("REPORTS_TO".into(), "Tom Baker".into(), Some(T0 + 5 * DAY)))
            && !at_day_3
                .iter()
                .any(|(t, n, _)| t == "REPORTS_TO" && n == "Ana Silva")
            && !at_day_3.iter().any(|(t, _, _)| t == "LEFT"),
        "{at_day_3:?}"
    );
}
