//! Governed writes through the whole path, against real Kafka, Neo4j and LanceDB:
//!
//! - an agent (MCP, rmcp's client) remembers a decision that supersedes the Atlas slip; its
//!   window (a 5 s delay) passes, the server applies it, the pipeline writes it, `/v1/search`
//!   finds it, the slip is superseded, and `get_proposal` shows its history;
//! - an agent's note rejected inside its window never applies;
//! - a stale proposal (the contradiction it would confirm was rejected meanwhile) is
//!   `conflicted` and nothing of it is applied; the rejected contradiction stays rejected
//!   after a restarted server and `epigraph rebuild`;
//! - an agent's edit approved by a reviewer applies at once and survives `epigraph rebuild`;
//! - roles: a reader cannot propose, an agent cannot approve or review, and over MCP even a
//!   reviewer's token proposes as an agent and cannot approve its own proposal;
//! - the webhook refuses a stale `if_version` with `409` and the current version, also when
//!   eight writers race from the same version (one wins).

use std::time::{Duration, Instant};

use epigraph_tests::corpus::{MEMO, PLANNED, SHEET, SLIPPED, authored as event};
use epigraph_tests::{TestEnv, http_get_with, http_post, ingest, neo4j, neo4j_count, serial};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

const CONTRADICTS: &str =
    "MATCH (:Memory {tenant: $tenant})-[r:CONTRADICTS]->(:Memory) RETURN count(r) AS n";

async fn memory(tenant: &str, text: &str) -> (String, String) {
    let mut rows = neo4j()
        .execute(
            neo4rs::query(
                "MATCH (m:Memory {tenant: $tenant}) WHERE m.text CONTAINS $text \
                 RETURN m.id AS id, m.type AS type",
            )
            .param("tenant", tenant)
            .param("text", text),
        )
        .await
        .expect("neo4j query");
    let row = rows
        .next()
        .await
        .expect("row")
        .unwrap_or_else(|| panic!("no memory object with {text:?}"));
    (row.get("id").expect("id"), row.get("type").expect("type"))
}

async fn standing(tenant: &str, text: &str) -> String {
    let mut rows = neo4j()
        .execute(
            neo4rs::query(
                "MATCH (m:Memory {tenant: $tenant}) WHERE m.text = $text RETURN m.standing AS s",
            )
            .param("tenant", tenant)
            .param("text", text),
        )
        .await
        .expect("neo4j query");
    let row = rows.next().await.expect("row").expect("the memory object");
    row.get("s").expect("standing")
}

/// Poll `GET /v1/proposals/{id}` until its state is `state` (or fail after `within`).
fn wait_for_state(base: &str, token: &str, id: &str, state: &str, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let (status, view) = http_get_with(&format!("{base}/v1/proposals/{id}"), Some(token));
        assert_eq!(status, 200, "{view}");
        if view["state"] == state || Instant::now() > deadline {
            assert_eq!(view["state"], state, "{view}");
            return view;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn steps(view: &Value) -> Vec<String> {
    view["history"]
        .as_array()
        .expect("history")
        .iter()
        .map(|r| r["step"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn proposals_apply_on_time_conflict_when_stale_and_survive_a_rebuild() {
    let _guard = serial().await;
    let env = TestEnv::new("proposals");
    let tenant = env.tenant.clone();
    let (reviewer, agent, reader, hook) = (
        format!("rev-{tenant}"),
        format!("bot-{tenant}"),
        format!("read-{tenant}"),
        format!("hook-{tenant}"),
    );
    let config = env.dir.path().join("governed.toml");
    std::fs::write(
        &config,
        format!(
            "[[serve.tokens]]\ntoken = \"{reviewer}\"\ntenant = \"{tenant}\"\nname = \"maya\"\nrole = \"reviewer\"\n\
             [[serve.tokens]]\ntoken = \"{agent}\"\ntenant = \"{tenant}\"\nname = \"scout-bot\"\nrole = \"agent\"\n\
             [[serve.tokens]]\ntoken = \"{reader}\"\ntenant = \"{tenant}\"\nrole = \"reader\"\n\
             [[serve.ingest_tokens]]\ntoken = \"{hook}\"\ntenant = \"{tenant}\"\n\
             [governance]\nagent = \"delay:5\"\nperson = \"immediate\"\ntick_ms = 200\n"
        ),
    )
    .unwrap();
    let config = config.to_str().unwrap().to_string();
    let lines = [
        event("document", "term-sheet", 0, SHEET, None),
        event("email", "memo", 2, MEMO, None),
        event("chat", "atlas/1", 0, PLANNED, None),
        event("chat", "atlas/2", 8, SLIPPED, None),
    ];
    let file = env.dir.path().join("events.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    ingest(&env, &["events", file.to_str().unwrap()]);
    env.run_until_idle();
    assert_eq!(neo4j_count(&neo4j(), CONTRADICTS, &tenant).await, 2);
    let (slip, _) = memory(&tenant, SLIPPED).await;
    let (sheet, sheet_type) = memory(&tenant, SHEET).await;
    let (memo, _) = memory(&tenant, MEMO).await;

    let server = env.serve_with(&["--config", &config]);
    let proposals = format!("{}/v1/proposals", server.base);
    let propose = |token: &str, change: Value| {
        http_post(
            &proposals,
            Some(token),
            &json!({"change": change, "why": "test", "agent": "scout"}).to_string(),
        )
    };

    // Roles: a reader cannot propose; an agent cannot review judgements directly.
    let note = json!({"kind": "remember", "memory_type": "OBSERVATION", "text": "The beta waitlist passed 400 teams."});
    let (status, body) = propose(&reader, note.clone());
    assert_eq!(status, 403, "{body}");
    let (status, body) = http_post(
        &format!("{}/v1/reviews", server.base),
        Some(&agent),
        &json!({"relation": "CONTRADICTS", "from": sheet, "to": memo, "verdict": "reject"})
            .to_string(),
    );
    assert_eq!(status, 403, "an agent disputes through a proposal: {body}");
    // A change that names nothing real, or changes nothing, is refused with the reason.
    let (status, body) = propose(
        &agent,
        json!({"kind": "edit", "node": "no-such-node", "memory_type": "DECISION"}),
    );
    assert_eq!(status, 404, "{body}");
    let (status, body) = propose(
        &agent,
        json!({"kind": "edit", "node": sheet, "memory_type": sheet_type}),
    );
    assert_eq!(status, 400, "{body}");

    // An agent's note rejected inside its window never applies.
    let (status, rejected) = propose(&agent, note);
    assert_eq!(status, 201, "{rejected}");
    assert_eq!(rejected["state"], "proposed", "{rejected}");
    assert_eq!(rejected["proposal"]["window"]["mode"], "delay");
    let rejected_id = rejected["id"].as_str().unwrap().to_string();
    let (status, body) = http_post(
        &format!("{proposals}/{rejected_id}/approve"),
        Some(&agent),
        "{}",
    );
    assert_eq!(status, 403, "an agent does not approve: {body}");
    let (status, body) = http_post(
        &format!("{proposals}/{rejected_id}/reject"),
        Some(&reviewer),
        &json!({"reason": "not ours to say"}).to_string(),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["state"], "rejected");

    // A stale proposal: the agent would confirm the contradiction, a reviewer rejects it first.
    let (status, stale) = propose(
        &agent,
        json!({"kind": "judgement", "relation": "CONTRADICTS", "from": sheet, "to": memo, "verdict": "confirm"}),
    );
    assert_eq!(status, 201, "{stale}");
    let field = format!("CONTRADICTS {sheet} -> {memo}");
    assert_eq!(
        stale["proposal"]["diff"][&field],
        json!(["drawn", "confirmed"]),
        "the server computed the diff: {stale}"
    );
    let (status, body) = http_post(
        &format!("{}/v1/reviews", server.base),
        Some(&reviewer),
        &json!({"relation": "CONTRADICTS", "from": memo, "to": sheet, "verdict": "reject", "reason": "two different rounds"})
            .to_string(),
    );
    assert_eq!(status, 202, "{body}");

    // An agent remembers a decision over MCP that supersedes the slip.
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", server.base))
            .auth_header(agent.clone()),
    );
    let client = ().serve(transport).await.expect("MCP initialize");
    let args = |v: Value| v.as_object().expect("object").clone();
    let remembered = client
        .call_tool(
            CallToolRequestParams::new("remember").with_arguments(args(json!({
                "memory_type": "DECISION",
                "text": "Decision: the Project Atlas beta opens to every customer on July 1, 2027.",
                "about": ["Project Atlas"],
                "supersedes": [slip],
                "why": "the steering group agreed today",
                "agent": "scout",
                "model": "test-model",
                "read": [slip],
            }))),
        )
        .await
        .expect("remember");
    let remembered = remembered.structured_content.expect("structured");
    assert_eq!(remembered["state"], "proposed", "{remembered}");
    assert_eq!(remembered["proposal"]["proposer"]["kind"], "agent");
    assert_eq!(remembered["proposal"]["proposer"]["identity"], "scout-bot");
    assert_eq!(remembered["proposal"]["proposer"]["model"], "test-model");
    let decision_id = remembered["id"].as_str().unwrap().to_string();

    // The window passes: the decision applies, the stale confirmation conflicts.
    let applied = wait_for_state(
        &server.base,
        &reviewer,
        &decision_id,
        "applied",
        Duration::from_secs(30),
    );
    assert_eq!(steps(&applied), ["proposed", "applied"], "{applied}");
    let stale_id = stale["id"].as_str().unwrap();
    let conflicted = wait_for_state(
        &server.base,
        &reviewer,
        stale_id,
        "conflicted",
        Duration::from_secs(30),
    );
    let changed = &conflicted["history"][1]["changed"][&field];
    assert_eq!(*changed, json!(["drawn", "rejected"]), "{conflicted}");
    let rejected = wait_for_state(
        &server.base,
        &reviewer,
        &rejected_id,
        "rejected",
        Duration::from_secs(1),
    );
    assert_eq!(steps(&rejected), ["proposed", "rejected"]);

    // An agent's edit, approved by a reviewer, applies at once.
    let new_type = if sheet_type == "OBSERVATION" {
        "EVIDENCE"
    } else {
        "OBSERVATION"
    };
    let edited = client
        .call_tool(CallToolRequestParams::new("propose_edit").with_arguments(args(json!({
            "node": sheet, "memory_type": new_type, "why": "a term sheet is evidence of an offer",
        }))))
        .await
        .expect("propose_edit")
        .structured_content
        .expect("structured");
    assert_eq!(
        edited["proposal"]["diff"]["type"],
        json!([sheet_type, new_type])
    );
    let edit_id = edited["id"].as_str().unwrap().to_string();
    let (status, approved) = http_post(
        &format!("{proposals}/{edit_id}/approve"),
        Some(&reviewer),
        "{}",
    );
    assert_eq!(status, 200, "{approved}");
    assert_eq!(approved["state"], "applied", "{approved}");
    assert_eq!(steps(&approved), ["proposed", "approved", "applied"]);
    let history = client
        .call_tool(
            CallToolRequestParams::new("get_proposal")
                .with_arguments(args(json!({"id": decision_id}))),
        )
        .await
        .expect("get_proposal")
        .structured_content
        .expect("structured");
    assert_eq!(history["state"], "applied", "{history}");
    client.cancel().await.expect("closing the MCP session");

    // Over MCP even a reviewer's token proposes as an agent, and does not approve its own.
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", server.base))
            .auth_header(reviewer.clone()),
    );
    let own = ().serve(transport).await.expect("MCP initialize");
    let noted = own
        .call_tool(
            CallToolRequestParams::new("remember").with_arguments(args(json!({
                "memory_type": "OBSERVATION", "text": "The pilot team asked for dark mode twice.",
            }))),
        )
        .await
        .expect("remember")
        .structured_content
        .expect("structured");
    assert_eq!(noted["proposal"]["proposer"]["kind"], "agent", "{noted}");
    let decide = |decision: &str| {
        CallToolRequestParams::new("decide_proposal")
            .with_arguments(args(json!({"id": noted["id"], "decision": decision})))
    };
    assert!(
        own.call_tool(decide("approve")).await.is_err(),
        "an agent does not approve its own proposal"
    );
    let withdrawn = own
        .call_tool(decide("withdraw"))
        .await
        .expect("withdraw")
        .structured_content
        .expect("structured");
    assert_eq!(withdrawn["state"], "withdrawn", "{withdrawn}");
    own.cancel().await.expect("closing the MCP session");

    // The pipeline writes what was applied.
    env.run_until_idle();
    assert_eq!(
        neo4j_count(&neo4j(), CONTRADICTS, &tenant).await,
        0,
        "the reviewer's rejection holds; the stale confirmation changed nothing"
    );
    let (decision, decision_type) = memory(&tenant, "Atlas beta opens").await;
    assert_eq!(decision_type, "DECISION");
    assert_eq!(standing(&tenant, SLIPPED).await, "superseded");
    assert_eq!(memory(&tenant, SHEET).await.1, new_type);
    let (status, found) = http_get_with(
        &format!("{}/v1/search?q=Atlas%20beta%20customers&k=3", server.base),
        Some(&agent),
    );
    assert_eq!(status, 200, "{found}");
    assert_eq!(found["results"][0]["id"], decision, "{found}");

    // The webhook's optimistic concurrency.
    let ingest_url = format!("{}/v1/ingest", server.base);
    let item = |body: &str, if_version: Value| {
        json!({"kind": "document", "source_id": "wiki/launch", "title": "Launch", "body": body, "if_version": if_version})
            .to_string()
    };
    let (status, first) = http_post(
        &ingest_url,
        Some(&hook),
        &item("The launch checklist has 12 items.", json!("")),
    );
    assert_eq!(status, 202, "{first}");
    let v1 = first["version"].as_str().unwrap().to_string();
    let (status, body) = http_post(
        &ingest_url,
        Some(&hook),
        &item("Another first version.", json!("")),
    );
    assert_eq!(status, 409, "create-only on an existing item: {body}");
    let (status, second) = http_post(
        &ingest_url,
        Some(&hook),
        &item("The launch checklist has 14 items.", json!(v1)),
    );
    assert_eq!(status, 202, "{second}");
    let v2 = second["version"].as_str().unwrap().to_string();
    let (status, body) = http_post(
        &ingest_url,
        Some(&hook),
        &item("A writer that missed v2.", json!(v1)),
    );
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["current_version"], v2.as_str());
    // Eight writers that all read v2, at the same time: exactly one wins; the check and the
    // publication are one step per key, while other keys' requests run beside them.
    let racers: Vec<_> = (0..8)
        .map(|i| {
            let (url, hook) = (ingest_url.clone(), hook.clone());
            let body = item(
                &format!("Writer {i} says the checklist has {} items.", 20 + i),
                json!(v2),
            );
            std::thread::spawn(move || http_post(&url, Some(&hook), &body))
        })
        .collect();
    let answers: Vec<(u16, Value)> = racers.into_iter().map(|r| r.join().unwrap()).collect();
    let statuses: Vec<u16> = answers.iter().map(|a| a.0).collect();
    let v3 = answers
        .iter()
        .find(|a| a.0 == 202)
        .and_then(|a| a.1["version"].as_str())
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        (
            statuses.iter().filter(|s| **s == 202).count(),
            statuses.iter().filter(|s| **s == 409).count()
        ),
        (1, 7),
        "{statuses:?}"
    );
    drop(server);

    // A restarted server reads the proposals back; after a rebuild everything applied holds,
    // and the webhook's check reads the version from the graph.
    env.run_until_idle();
    env.epigraph(&["rebuild", "--tenant", &tenant]);
    assert_eq!(neo4j_count(&neo4j(), CONTRADICTS, &tenant).await, 0);
    assert_eq!(
        memory(&tenant, SHEET).await.1,
        new_type,
        "the edit survives"
    );
    assert_eq!(standing(&tenant, SLIPPED).await, "superseded");
    let server = env.serve_with(&["--config", &config]);
    let deadline = Instant::now() + Duration::from_secs(20);
    let listed = loop {
        let (status, listed) = http_get_with(
            &format!("{}/v1/proposals?state=applied", server.base),
            Some(&reviewer),
        );
        assert_eq!(status, 200, "{listed}");
        if listed["proposals"].as_array().is_some_and(|p| p.len() == 2) || Instant::now() > deadline
        {
            break listed;
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    assert_eq!(
        listed["proposals"].as_array().unwrap().len(),
        2,
        "the decision and the edit: {listed}"
    );
    let (status, body) = http_post(
        &format!("{}/v1/ingest", server.base),
        Some(&hook),
        &item("Still missing v3.", json!(v2)),
    );
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["current_version"], v3.as_str());
}
