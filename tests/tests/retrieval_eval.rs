//! `epigraph eval retrieval` end to end: a small BEIR folder (with document times, a superseded
//! plan and its successor) ingested through Kafka and the pipeline into a fresh tenant, queried
//! through `/v1/search?level=source`, scored.

use epigraph_tests::corpus::{DAY, T0};
use epigraph_tests::{TestEnv, last_json_line, serial};

#[tokio::test(flavor = "multi_thread")]
async fn a_beir_folder_is_ingested_queried_and_scored() {
    let _guard = serial().await;
    let env = TestEnv::new("beireval");
    let dir = env.dir.path().join("set");
    std::fs::create_dir_all(dir.join("qrels")).expect("folders");
    let doc = |id: &str, text: &str, day: i64| {
        serde_json::json!({"_id": id, "title": id, "text": text,
                           "metadata": {"occurred_at": T0 + day * DAY, "kind": "chat"}})
        .to_string()
    };
    let corpus = [
        doc(
            "old",
            "Project Atlas launch is planned for May 13, 2027.",
            0,
        ),
        doc(
            "new",
            "Heads up, the Project Atlas launch slips to June 3, 2027.",
            8,
        ),
        doc(
            "budget",
            "The marketing budget is capped at €40K this quarter.",
            1,
        ),
        doc(
            "hire",
            "We decided to hire two backend engineers for the platform team.",
            2,
        ),
        doc(
            "lunch",
            "Lunch is at noon on Friday, bring snacks for everyone.",
            3,
        ),
        // Code is no statement: only the chunks hold the command (the chunk signal finds it).
        doc(
            "runbook",
            "Restarts follow the usual steps.\n\n```\nkubectl rollout restart deploy/frobnicator-gateway\n```\n",
            4,
        ),
    ];
    std::fs::write(dir.join("corpus.jsonl"), corpus.join("\n") + "\n").expect("corpus");
    let queries = [
        r#"{"_id": "q1", "text": "When is the Atlas launch now?", "metadata": {"kind": "state"}}"#,
        r#"{"_id": "q2", "text": "How much may marketing spend?", "metadata": {"kind": "lookup"}}"#,
        r#"{"_id": "q3", "text": "backend engineers hiring decision", "metadata": {"kind": "lookup"}}"#,
        r#"{"_id": "q4", "text": "kubectl rollout frobnicator-gateway", "metadata": {"kind": "lookup"}}"#,
    ];
    std::fs::write(dir.join("queries.jsonl"), queries.join("\n") + "\n").expect("queries");
    std::fs::write(
        dir.join("qrels/test.tsv"),
        "query-id\tcorpus-id\tscore\nq1\tnew\t2\nq1\told\t1\nq2\tbudget\t2\nq3\thire\t2\nq4\trunbook\t2\n",
    )
    .expect("qrels");
    std::fs::write(
        dir.join("state.jsonl"),
        r#"{"query_id": "q1", "current": "new", "superseded": "old"}"#.to_string() + "\n",
    )
    .expect("state");

    let rankings_out = env.dir.path().join("rankings.json");
    let out = env.epigraph(&[
        "eval",
        "retrieval",
        dir.to_str().expect("utf-8"),
        "--k",
        "10",
        "--rankings-out",
        rankings_out.to_str().expect("utf-8"),
    ]);
    let start = out.find('{').expect("a JSON report");
    let report: serde_json::Value =
        serde_json::from_str(&out[start..]).unwrap_or_else(|_| last_json_line(&out));
    assert_eq!(report["documents"], 6, "{report}");
    assert!(report["tenant"].as_str().unwrap().starts_with("eval-set-"));
    assert!(report["memory_objects"].as_u64().unwrap() >= 5, "{report}");
    let names: Vec<&str> = report["systems"]
        .as_array()
        .expect("systems")
        .iter()
        .map(|s| s["system"].as_str().expect("a name"))
        .collect();
    assert_eq!(
        names,
        [
            "epigraph-hybrid",
            "epigraph-hybrid-unmodulated",
            "epigraph-hybrid-memory"
        ]
    );
    let scores = &report["systems"][0];
    assert_eq!(scores["queries"], 4, "{report}");
    assert!(scores["ndcg@10"].as_f64().unwrap() > 0.8, "{report}");
    assert_eq!(scores["recall@100"], 1.0, "{report}");
    assert_eq!(scores["state_pairs"], 1);
    assert_eq!(scores["state_current_first"], 1.0, "{report}");
    assert!(report["systems"][1]["ndcg@10"].is_f64());
    assert_eq!(report["ndcg10_by_kind"]["lookup"]["queries"], 3.0);
    // The fused ranking finds the command that no statement holds, first.
    let rankings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rankings_out).expect("rankings"))
            .expect("rankings JSON");
    assert_eq!(rankings["fused"]["q4"][0], "runbook", "{rankings}");
    assert_eq!(report["per_query"]["q4"]["fused"], 1.0, "{report}");
}
