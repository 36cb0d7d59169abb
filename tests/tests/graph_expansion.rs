//! Graph-aware expansion of `level=source` against the real stores: a document that shares no
//! word with the query is brought in by the walk from the statement that cites it
//! (`BASED_ON`, drawn by the citation rules), and `explain` shows the path; with the graph
//! weight at 0 the same query does not find it.

use epigraph_tests::corpus::event;
use epigraph_tests::{TestEnv, ingest, last_json_line, serial};

const GATES: &str = "KEP: 100\nTitle: Pod readiness gates\n\n# Summary\n\n\
    Readiness gates let an external controller hold a pod out of service endpoints until \
    custom conditions report ready.\n";
const DRAIN: &str = "KEP: 200\nTitle: Frobnicator drain windows\n\n# Summary\n\n\
    This KEP builds on the readiness gates of KEP-100: the frobnicator holds a pod out of \
    service endpoints through its readiness conditions while the quiescence window closes.\n";
const UNRELATED: &str = "KEP: 300\nTitle: Image garbage collection\n\n# Summary\n\n\
    The kubelet deletes unused container images when the disk fills past a threshold.\n";

fn source_ids(body: &serde_json::Value) -> Vec<String> {
    body["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["source_id"].as_str().expect("source id").to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_walk_brings_in_the_document_a_statement_builds_on() {
    let _guard = serial().await;
    let env = TestEnv::new("walk");
    let lines = [
        event("document", "kep-100", 0, GATES),
        event("document", "kep-200", 5, DRAIN),
        event("document", "kep-300", 6, UNRELATED),
    ];
    let file = env.dir.path().join("events.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").expect("events");
    ingest(&env, &["events", file.to_str().expect("utf-8")]);
    let report = last_json_line(&env.epigraph(&["run", "--until-idle"]));
    assert_eq!(report["live_sources"], 3, "{report}");
    let graph = epigraph_tests::neo4j();
    let cited = epigraph_tests::neo4j_count(
        &graph,
        "MATCH (a:Memory)-[r:BASED_ON]->(b:Memory) WHERE a.tenant = $tenant \
         AND a.source_id = 'kep-200' AND b.source_id = 'kep-100' RETURN count(r) AS n",
        &env.tenant,
    )
    .await;
    assert!(cited >= 1, "the citation is an edge of the graph");

    // Full text only: the vector retriever would return every document of so small a corpus.
    let path = format!(
        "/v1/search?q=quiescence&level=source&mode=text&explain=true&k=5&tenant={}",
        env.tenant
    );
    let without = env.serve_with_env(&[], &[("EPIGRAPH_SERVE__RANK__SOURCE_GRAPH_WEIGHT", "0")]);
    let found = without.get(&path);
    assert_eq!(source_ids(&found), ["kep-200"], "{found}");
    drop(without);

    let with = env.serve_with_env(&[], &[("EPIGRAPH_SERVE__RANK__SOURCE_GRAPH_WEIGHT", "0.3")]);
    let found = with.get(&path);
    let ids = source_ids(&found);
    assert_eq!(
        ids[0], "kep-200",
        "the seed's document stays first: {found}"
    );
    let basis = found["results"]
        .as_array()
        .expect("results")
        .iter()
        .find(|r| r["source_id"] == "kep-100")
        .unwrap_or_else(|| panic!("the cited document is brought in: {found}"));
    let explain = &basis["explain"];
    assert_eq!(explain["brought_by"], "graph", "{basis}");
    assert!(explain["graph"].as_f64().expect("graph part") > 0.0);
    assert_eq!(explain["memory"], 0.0, "no retriever found it: {basis}");
    let rels: Vec<&str> = explain["graph_path"]
        .as_array()
        .expect("a path")
        .iter()
        .map(|s| s["rel"].as_str().expect("rel"))
        .collect();
    assert!(
        rels.contains(&"BASED_ON"),
        "the path names the citation: {basis}"
    );
    assert!(basis["title"].is_string(), "{basis}");
    assert!(
        basis["snippet"]
            .as_str()
            .is_some_and(|s| s.contains("Readiness gates")),
        "{basis}"
    );
    // The unrelated document shares no word, no entity and no edge: never brought in.
    assert!(!ids.contains(&"kep-300".to_string()), "{found}");
}
