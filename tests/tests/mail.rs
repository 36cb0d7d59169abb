//! An mbox with a malformed message through the whole path.

use epigraph_tests::{TestEnv, ingest, neo4j, neo4j_count, serial};

#[tokio::test(flavor = "multi_thread")]
async fn an_mbox_lands_in_the_graph_and_its_bad_message_is_dead_lettered() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-mbox");
    let mbox = epigraph_schemas::manifest_dir!().join("../sources/tests/fixtures/mail/inbox.mbox");
    let summary = ingest(&env, &["mbox", mbox.to_str().unwrap()]);
    assert_eq!(
        (
            summary["published"].as_u64(),
            summary["dead_lettered"].as_u64()
        ),
        (Some(2), Some(1)),
        "{summary}"
    );
    env.run_until_idle();
    let graph = neo4j();
    let emails = neo4j_count(
        &graph,
        "MATCH (s:Source:Email {tenant: $tenant}) RETURN count(s) AS n",
        &env.tenant,
    )
    .await;
    assert_eq!(emails, 2);
}

/// A message with a PDF, a Word document (sent as application/octet-stream), a damaged "PDF" and
/// a text file: the two readable attachments become documents of their own whose statements
/// reach the graph and search; the damaged one is a dead letter; the message is published.
#[tokio::test(flavor = "multi_thread")]
async fn pdf_and_word_attachments_become_searchable_documents_of_their_own() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-attach");
    let eml = epigraph_schemas::manifest_dir!()
        .join("../sources/tests/fixtures/formats/memo-and-plan.eml");
    let summary = ingest(&env, &["eml", eml.to_str().unwrap()]);
    assert_eq!(
        (
            summary["published"].as_u64(),
            summary["dead_lettered"].as_u64()
        ),
        (Some(3), Some(1)),
        "{summary}"
    );
    env.run_until_idle();
    let graph = neo4j();
    let count = |cypher: &'static str| neo4j_count(&graph, cypher, &env.tenant);
    assert_eq!(
        count("MATCH (s:Source:Email {tenant: $tenant}) RETURN count(s) AS n").await,
        1
    );
    assert_eq!(
        count(
            "MATCH (s:Source:Document {tenant: $tenant}) \
             WHERE s.source_id STARTS WITH 'mail/memo-7@acme.example/attachment/' RETURN count(s) AS n"
        )
        .await,
        2
    );
    // The memo's decision, read from the PDF, is a memory object of the attachment's source.
    assert_eq!(
        count(
            "MATCH (m:Memory {tenant: $tenant})-[:DERIVED_FROM]->\
             (:Source {source_id: 'mail/memo-7@acme.example/attachment/1'}) \
             WHERE m.text CONTAINS '2.3M valuation cap' RETURN count(m) AS n"
        )
        .await,
        1
    );
    let server = env.serve();
    let answer = server.get(&format!(
        "/v1/search?q=who%20owns%20the%20launch%20checklist&k=1&level=source&tenant={}",
        env.tenant
    ));
    assert_eq!(
        answer["results"][0]["source_id"], "mail/memo-7@acme.example/attachment/2",
        "{answer}"
    );
}
