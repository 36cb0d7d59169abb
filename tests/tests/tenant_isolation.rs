//! Tenant isolation, proven per endpoint: tenant B's memory (a marker word in every statement,
//! its node ids, a proposal) sits next to tenant A's in the same Kafka, Neo4j and LanceDB; a
//! client holding A's token walks **every operation of `/openapi.json`** and **every MCP
//! tool**, passing B's ids and words explicitly wherever a parameter takes them, and nothing of
//! B ever comes back — no statement, no id, no tenant name — while B's own token finds it (so
//! the walk is not vacuous). Asking for B by `tenant=` with A's token is refused (403); A's
//! token cannot approve, reject or withdraw B's proposal; the live stream and the metrics carry
//! nothing of B.

use std::time::{Duration, Instant};

use epigraph_tests::corpus::{MEMO, PLANNED, SHEET, SLIPPED, event};
use epigraph_tests::{TestEnv, http_get_with, http_post, neo4j, serial};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

/// Every statement of tenant B carries this word; A's corpus never does. Requests send it
/// alone (and may echo it); B's text is recognised by [`B_PHRASES`].
const MARK: &str = "Zanzibar";
/// Phrases of B's statements, entities and proposal that no request sends.
const B_PHRASES: [&str; 4] = [
    "Project Zanzibar",
    "Zanzibar Capital",
    "Zanzibar wire",
    "Zanzibar launch",
];

/// Ids of tenant B's nodes by label.
async fn node_ids(tenant: &str, label: &str) -> Vec<String> {
    let graph = neo4j();
    let mut rows = graph
        .execute(
            neo4rs::query(&format!(
                "MATCH (n:{label}) WHERE n.tenant = $tenant RETURN n.id AS id ORDER BY id"
            ))
            .param("tenant", tenant),
        )
        .await
        .expect("query");
    let mut out = Vec::new();
    while let Some(row) = rows.next().await.expect("row") {
        out.push(row.get::<String>("id").expect("id"));
    }
    out
}

/// What must never reach tenant A: the marker, B's ids, B's tenant name as a value.
struct Secrets {
    ids: Vec<String>,
    tenant: String,
}

impl Secrets {
    /// What of B's `text` shows. B's phrases are looked for in the whole answer (no request
    /// sends them: requests send the marker word alone); B's ids and tenant name beyond the
    /// values the request itself `sent` (an answer may echo them: "no node \"…\" in tenant …").
    fn leak(&self, text: &str, sent: &[String]) -> Option<String> {
        if let Some(phrase) = B_PHRASES.iter().find(|p| text.contains(*p)) {
            return Some(phrase.to_string());
        }
        let mut text = text.to_string();
        for value in sent {
            text = text.replace(value.as_str(), "");
        }
        if text.contains(&format!("\"{}\"", self.tenant)) {
            return Some(format!("tenant {}", self.tenant));
        }
        self.ids
            .iter()
            .find(|id| text.contains(id.as_str()))
            .cloned()
    }
}

/// A value for a parameter of that name: B's words and ids wherever one fits.
fn values_for(name: &str, b: &BIds) -> Vec<String> {
    match name {
        "q" | "query" | "subject" | "name" | "text" | "question" => vec![MARK.into()],
        "id" | "node" | "from" | "to" | "memory_id" | "question_id" | "answer" | "target" => {
            vec![b.memory.clone(), b.entity.clone(), b.proposal.clone()]
        }
        "path" => vec!["MENTIONS".into()],
        "relation" => vec!["CONTRADICTS".into()],
        _ => Vec::new(),
    }
}

/// Every string inside a JSON value.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

struct BIds {
    memory: String,
    entity: String,
    proposal: String,
}

#[tokio::test(flavor = "multi_thread")]
async fn nothing_of_another_tenant_comes_back_through_any_route_or_tool() {
    let _guard = serial().await;
    let env = TestEnv::new("isolation");
    let a = env.tenant.clone();
    let b = format!("{a}-b");
    let a_lines = [
        event("document", "term-sheet", 0, SHEET),
        event("email", "memo", 2, MEMO),
        event("chat", "atlas/1", 0, PLANNED),
        event("chat", "atlas/2", 8, SLIPPED),
    ];
    epigraph_tests::ingest_two_tenants(&env, &a_lines, &b);
    let memories = node_ids(&b, "Memory").await;
    let entities = node_ids(&b, "Entity").await;
    assert!(
        !memories.is_empty() && !entities.is_empty(),
        "B has a graph"
    );

    let config = env.dir.path().join("serve.toml");
    std::fs::write(
        &config,
        format!(
            "[[serve.tokens]]\ntoken = \"token-a\"\ntenant = \"{a}\"\nrole = \"reviewer\"\n\n\
             [[serve.tokens]]\ntoken = \"token-b\"\ntenant = \"{b}\"\nrole = \"reviewer\"\n\n\
             [serve]\nreport_usage = false\n\n[governance]\nperson = \"approval\"\n"
        ),
    )
    .expect("config");
    let server = env.serve_with(&["--config", config.to_str().expect("utf-8")]);
    let base = server.base.clone();

    // B's own token finds B (the positive control) and B proposes a note, left waiting.
    let (status, found) = http_get_with(&format!("{base}/v1/search?q={MARK}&k=5"), Some("token-b"));
    assert_eq!(status, 200, "{found}");
    assert!(found.to_string().contains(MARK), "B sees B: {found}");
    let (status, proposal) = http_post(
        &format!("{base}/v1/proposals"),
        Some("token-b"),
        &json!({"change": {"kind": "remember", "memory_type": "OBSERVATION",
                           "text": "Zanzibar wire instructions are signed by Ines."},
                "why": "isolation test"})
        .to_string(),
    );
    assert_eq!(status, 201, "{proposal}");
    let proposal_id = proposal["id"].as_str().expect("proposal id").to_string();
    let ids = BIds {
        memory: memories[0].clone(),
        entity: entities[0].clone(),
        proposal: proposal_id.clone(),
    };
    let mut secret_ids = memories.clone();
    secret_ids.extend(entities.iter().cloned());
    secret_ids.push(proposal_id.clone());
    let secrets = Secrets {
        ids: secret_ids,
        tenant: b.clone(),
    };
    // The check recognises B's own answer to the same request: it can fail.
    assert!(
        secrets
            .leak(&found.to_string(), &[MARK.to_string()])
            .is_some(),
        "the leak check sees B in B's answer: {found}"
    );

    // Every operation of the OpenAPI document, with A's token.
    let (status, openapi) = http_get_with(&format!("{base}/openapi.json"), None);
    assert_eq!(status, 200);
    let client = reqwest::Client::new();
    let mut asked = 0usize;
    let mut operations = 0usize;
    for (path, item) in openapi["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("operations") {
            if !["get", "post", "delete"].contains(&method.as_str()) {
                continue;
            }
            operations += 1;
            let params: Vec<(String, String)> = operation["parameters"]
                .as_array()
                .map(|ps| {
                    ps.iter()
                        .map(|p| {
                            (
                                p["name"].as_str().unwrap_or_default().to_string(),
                                p["in"].as_str().unwrap_or_default().to_string(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            // One request per B value of each parameter that takes one (at least one request).
            let mut variants: Vec<Vec<(String, String, String)>> = vec![Vec::new()];
            for (name, place) in &params {
                let values = values_for(name, &ids);
                if values.is_empty() {
                    continue;
                }
                variants = variants
                    .into_iter()
                    .flat_map(|v| {
                        values.iter().map(move |value| {
                            let mut v = v.clone();
                            v.push((name.clone(), place.clone(), value.clone()));
                            v
                        })
                    })
                    .take(9)
                    .collect();
            }
            if path.contains("{id}") && !params.iter().any(|(n, _)| n == "id") {
                variants = values_for("id", &ids)
                    .into_iter()
                    .map(|v| vec![("id".into(), "path".into(), v)])
                    .collect();
            }
            // And once asking for B by name.
            let mut with_tenant = variants[0].clone();
            with_tenant.push(("tenant".into(), "query".into(), b.clone()));
            variants.push(with_tenant);
            for variant in variants {
                let mut url_path = path.clone();
                let mut query: Vec<(String, String)> = Vec::new();
                for (name, place, value) in &variant {
                    if place == "path" {
                        url_path = url_path.replace(&format!("{{{name}}}"), value);
                    } else {
                        query.push((name.clone(), value.clone()));
                    }
                }
                if url_path.contains('{') {
                    continue;
                }
                let url = format!("{base}{url_path}");
                let body = match (method.as_str(), url_path.as_str()) {
                    ("post", "/v1/context") => json!({"query": MARK}),
                    ("post", "/v1/proposals") => json!({
                        "change": {"kind": "edit", "node": ids.memory, "text": "Overwritten by A."},
                        "why": "cross-tenant edit"}),
                    ("post", "/v1/reviews") => json!({
                        "relation": "SUPERSEDES", "from": memories[0], "to": memories[1 % memories.len()],
                        "verdict": "reject"}),
                    ("post", "/v1/ingest") => {
                        json!({"kind": "chat", "source_id": "x", "body": "x"})
                    }
                    _ => json!({}),
                };
                let request = match method.as_str() {
                    "get" => client.get(&url),
                    "post" => client.post(&url).json(&body),
                    _ => client.delete(&url),
                }
                .query(&query)
                .bearer_auth("token-a");
                let response = if url_path == "/v1/dashboard/stream" {
                    // A stream: read what it sends in two seconds.
                    let mut response = request.send().await.expect("stream");
                    let status = response.status().as_u16();
                    let mut text = String::new();
                    let until = Instant::now() + Duration::from_secs(2);
                    while Instant::now() < until {
                        match tokio::time::timeout(Duration::from_millis(500), response.chunk())
                            .await
                        {
                            Ok(Ok(Some(chunk))) => text.push_str(&String::from_utf8_lossy(&chunk)),
                            Ok(_) => break,
                            Err(_) => {}
                        }
                    }
                    (status, text)
                } else {
                    let response = request.send().await.expect("request");
                    let status = response.status().as_u16();
                    (status, response.text().await.unwrap_or_default())
                };
                asked += 1;
                let (status, text) = response;
                let mut sent: Vec<String> = variant.iter().map(|(_, _, v)| v.clone()).collect();
                strings(&body, &mut sent);
                if let Some(leak) = secrets.leak(&text, &sent) {
                    panic!(
                        "{} {url_path} {query:?} with A's token returned B's {leak} ({status}): {text}",
                        method.to_uppercase()
                    );
                }
                if query.iter().any(|(n, v)| n == "tenant" && *v == b) {
                    assert_eq!(status, 403, "{method} {url_path} asked for B: {text}");
                }
                if url_path.starts_with("/v1/proposals/") && method == "post" {
                    assert_ne!(status, 200, "A decided B's proposal: {url_path} {text}");
                }
            }
        }
    }
    assert!(operations >= 20, "the walk covered {operations} operations");
    assert!(asked >= 40, "{asked} requests");

    // B's proposal is untouched by A's decisions.
    let (status, view) = http_get_with(
        &format!("{base}/v1/proposals/{proposal_id}"),
        Some("token-b"),
    );
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["state"], "proposed", "{view}");
    // Metrics: no label names B.
    let (_, metrics) = http_get_with(&format!("{base}/metrics"), Some("token-a"));
    assert!(
        secrets.leak(&metrics.to_string(), &[]).is_none(),
        "{metrics}"
    );

    // Every MCP tool, with A's token, fed B's words and ids.
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("{base}/mcp")).auth_header("token-a"),
    );
    let mcp = ().serve(transport).await.expect("MCP initialize");
    let tools = mcp.list_all_tools().await.expect("tools/list");
    assert!(tools.len() >= 15, "{} tools", tools.len());
    let mut calls = 0usize;
    for tool in &tools {
        let properties = tool
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for pick in 0..3 {
            let mut args = serde_json::Map::new();
            for (name, schema) in &properties {
                let values = values_for(name, &ids);
                if let Some(value) = values.get(pick.min(values.len().saturating_sub(1))) {
                    args.insert(name.clone(), Value::String(value.clone()));
                } else if name == "tenant" {
                    args.insert(name.clone(), Value::String(b.clone()));
                } else if schema.to_string().contains("integer") && name != "as_of" {
                    args.insert(name.clone(), json!(5));
                }
            }
            let result = mcp
                .call_tool(
                    CallToolRequestParams::new(tool.name.to_string()).with_arguments(args.clone()),
                )
                .await;
            calls += 1;
            let text = match &result {
                Ok(result) => serde_json::to_string(result).expect("json"),
                Err(error) => error.to_string(),
            };
            let sent: Vec<String> = args
                .values()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect();
            if let Some(leak) = secrets.leak(&text, &sent) {
                panic!(
                    "MCP {} {args:?} with A's token returned B's {leak}: {text}",
                    tool.name
                );
            }
        }
    }
    assert!(calls >= 45, "{calls} tool calls");
    let (status, view) = http_get_with(
        &format!("{base}/v1/proposals/{proposal_id}"),
        Some("token-b"),
    );
    assert_eq!(
        (status, view["state"].clone()),
        (200, json!("proposed")),
        "{view}"
    );
}
