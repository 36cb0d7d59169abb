//! The webhook (`POST /v1/ingest`) and the BEIR corpus source, through the real path.

use epigraph_tests::{TestEnv, find_dead_letter, http_post, ingest, neo4j, neo4j_count, serial};

#[tokio::test(flavor = "multi_thread")]
async fn webhook_events_are_authenticated_validated_and_published() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-hook");
    let config = env.dir.path().join("epigraph.toml");
    std::fs::write(
        &config,
        format!(
            "[[serve.ingest_tokens]]\ntoken = \"secret-{0}\"\ntenant = \"{0}\"\n",
            env.tenant
        ),
    )
    .unwrap();
    let token = format!("secret-{}", env.tenant);
    let server = env.serve_with(&["--config", config.to_str().unwrap()]);
    let url = format!("{}/v1/ingest", server.base);

    let event = r##"{"kind": "chat", "source_id": "general/1700000000.000100", "title": "#general",
        "body": "The vendor contract renewal is approved for three more years.",
        "authors": [{"name": "Lena Fischer", "address": "lena@northwind.example"}], "occurred_at": 1700000000000}"##;
    let (status, answer) = http_post(&url, None, event);
    assert_eq!(status, 401, "{answer}");
    let (status, answer) = http_post(&url, Some("wrong"), event);
    assert_eq!(status, 401, "{answer}");
    let (status, answer) = http_post(&url, Some(&token), event);
    assert_eq!(status, 202, "{answer}");
    assert_eq!(
        answer["key"],
        format!("{}/general/1700000000.000100", env.tenant)
    );

    let (status, answer) = http_post(
        &url,
        Some(&token),
        r#"{"kind": "fax", "source_id": "x", "body": "y"}"#,
    );
    assert_eq!(status, 400);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("kind must be"),
        "{answer}"
    );
    let letter = find_dead_letter(&env, "the webhook", |l| {
        l.stage == "webhook" && l.tenant.as_deref() == Some(env.tenant.as_str())
    })
    .await;
    assert!(letter.reason.contains("kind must be"), "{}", letter.reason);
    let (status, _) = http_post(&url, Some(&token), "{not json");
    assert_eq!(status, 400);
    drop(server);

    env.run_until_idle();
    let graph = neo4j();
    let chats = neo4j_count(
        &graph,
        "MATCH (s:Source:Chat {tenant: $tenant}) RETURN count(s) AS n",
        &env.tenant,
    )
    .await;
    assert_eq!(chats, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn beir_corpus_lines_become_documents_keyed_by_their_id() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-beir");
    let corpus = env.dir.path().join("beir");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(
        corpus.join("corpus.jsonl"),
        "{\"_id\": \"doc-1\", \"title\": \"Tides\", \"text\": \"The moon drives ocean tides.\"}\n\
         {\"_id\": \"doc-2\", \"title\": \"Bread\", \"text\": \"Sourdough needs a starter.\"}\n\
         {\"broken\": true}\n",
    )
    .unwrap();
    let summary = ingest(&env, &["beir", corpus.to_str().unwrap()]);
    assert_eq!(
        (
            summary["published"].as_u64(),
            summary["dead_lettered"].as_u64()
        ),
        (Some(2), Some(1)),
        "{summary}"
    );
    env.run_until_idle();
    let server = env.serve();
    let answer = server.get(&format!(
        "/v1/search?q=ocean%20tides&k=1&tenant={}",
        env.tenant
    ));
    assert_eq!(answer["results"][0]["source_id"], "doc-1", "{answer}");
}
