//! An mbox with a malformed message through the whole path.

use std::path::PathBuf;

use epigraph_tests::{TestEnv, ingest, neo4j, neo4j_count, serial};

#[tokio::test(flavor = "multi_thread")]
async fn an_mbox_lands_in_the_graph_and_its_bad_message_is_dead_lettered() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-mbox");
    let mbox =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../sources/tests/fixtures/mail/inbox.mbox");
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
