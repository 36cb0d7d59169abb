//! Injection, proven by behaviour: a client walks **every operation of `/openapi.json`**, the
//! ingest webhook and **every MCP tool**, and puts each of a list of hostile strings — Cypher
//! (quotes, comments, `DETACH DELETE`, `CALL db.labels()`, backticks, `$param`, braces), label and
//! relationship-type syntax (`Node:Admin`, `KNOWS]->(m) DETACH DELETE m //`), LanceDB/DataFusion
//! filter syntax (`' OR '1'='1`, `'); DROP TABLE memory; --`), odd instants, NUL bytes, control
//! characters, Unicode and a 6,600-character string — into every parameter in turn: query and
//! path parameters, every string (and number) of the JSON bodies, every tool argument.
//!
//! Every answer must be a 2xx, or a 4xx in the documented JSON error shape; no answer may show
//! a Cypher or DataFusion error, nor anything of tenant B, whose memory (a marker word in every
//! statement) sits in the same Kafka, Neo4j and LanceDB and whose marker the filter-injection
//! strings carry. A `tenant` parameter naming anything but the token's tenant is refused (403).
//!
//! The stores are fingerprinted before the walk: every node of both tenants (id, labels,
//! properties) and every relationship touching them, the node and relationship counts of the
//! whole database, the count per label, `db.labels()`, `db.relationshipTypes()` and LanceDB's row
//! and chunk counts. The query service writes only to Kafka, so right after the walk all of it
//! must be exactly as before. Then `epigraph run` carries what the walk wrote (the hostile notes,
//! webhook events, reviews and proposals of tenant A) into the stores, and still: B is
//! unchanged to the property, nothing outside A changed, every node of A that existed is still
//! there with its labels, and every label and relationship type is a plain identifier that the
//! database had before or the closed vocabulary names (no user text becomes a label or type).
//! An instant is a value, never a switch: `as_of=-1` asks for 1969, not for "now".
//!
//! Last, a server in development mode (no tokens: the `tenant` parameter chooses the tenant, so
//! only there a client's tenant reaches the Cypher parameters and LanceDB filters) gets every
//! hostile string as the tenant of every GET operation: refused (400) unless a valid tenant
//! name, and never a statement or node of A or B.
//!
//! In the suite each parameter, body field, tool argument and dev-mode operation gets a rotating
//! third of the strings ([`Sample`]: every string is still tried in many places of every kind);
//! `EPIGRAPH_INJECTION_STRIDE=1 cargo test --workspace --locked --test injection` tries every
//! string everywhere (≈ 4 min alone on 2 cores, ≈ 12 min beside the rest of the suite).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use epigraph_schemas::graph::{PRIORITY_HASH, PRIORITY_PROPERTIES};
use epigraph_tests::corpus::{MEMO, PLANNED, QUESTION, SHEET, SLIPPED, event};
use epigraph_tests::{TestEnv, http_get_with, http_post, neo4j, serial};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ErrorCode};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde::Deserialize;
use serde_json::{Value, json};

/// Every statement of tenant B carries this word; A's corpus never does. Hostile strings carry
/// it too (a filter injection that worked would return B's rows); B's text is recognised by
/// [`B_PHRASES`], which no request sends.
const MARK: &str = "Zanzibar";
/// Phrases of A's statements (what a development-mode request for another tenant must not see).
const A_PHRASES: [&str; 3] = ["€320K", "€200K", "Atlas launch"];
/// Odd tenant names that are valid (development mode reads them: empty tenants).
const ODD_TENANTS: [&str; 5] = [".", "..", "-", "_", "x.y-z_1"];
/// Phrases of B's statements and entities that no request sends.
const B_PHRASES: [&str; 4] = [
    "Project Zanzibar",
    "Zanzibar Capital",
    "Zanzibar wire",
    "Zanzibar launch",
];

/// Words of a store's own error that must never reach a client: a Cypher or DataFusion syntax
/// error, a driver error, a panic.
const INTERNALS: [&str; 14] = [
    "syntaxerror",
    "neo.clienterror",
    "neo.databaseerror",
    "neo.transienterror",
    "invalid input '",
    "sql parser error",
    "parsererror",
    "error parsing statement",
    "error tokenizing",
    "datafusion",
    "lance error",
    "arrow error",
    "panicked",
    "cypher",
];

/// The hostile strings, each put into every parameter in turn. `b_memory` is one of B's ids:
/// a query that spliced it with the rest would return B's node.
fn hostile(b_memory: &str) -> Vec<String> {
    let mut out: Vec<String> = [
        // Cypher: quotes, comments, clauses, identifiers, parameters, maps.
        "x' OR 1=1 //",
        "x\" OR 1=1 //",
        "\"}) MATCH (n) DETACH DELETE n //",
        "'}) MATCH (n) DETACH DELETE n //",
        "x` RETURN 1 //",
        "') CALL db.labels() YIELD label RETURN label //",
        "x\"}) WITH 1 AS a MATCH (n) SET n.injected = true RETURN n //",
        "1 UNION MATCH (n) RETURN n",
        "*/ MATCH (n) DETACH DELETE n /*",
        "`",
        "$tenant",
        "{",
        "\\' OR 1=1 --",
        // Labels and relationship types.
        "Node:Admin",
        "KNOWS]->(m) DETACH DELETE m //",
        "<KNOWS]-(m) DETACH DELETE m //",
        "MENTIONS|SAME_AS*1..9",
        "MENTIONS`]->() DETACH DELETE n //",
        // LanceDB (DataFusion SQL) filters, with B's marker word.
        "Zanzibar' OR tenant <> 'x",
        "Zanzibar' OR '1'='1",
        "x'); DROP TABLE memory; --",
        "Zanzibar\" OR \"1\"=\"1",
        "DECISION') OR ('1'='1",
        // Instants.
        "2026-01-01T00:00:00Z' OR 1=1",
        "-1",
        "-999999999999",
        "9999-99-99",
        "-9223372036854775808",
        "9223372036854775807",
        "18446744073709551615",
        "99999999999999999999999",
        "+262143-12-31T23:59:59Z",
        // Bytes and text.
        "\u{0}",
        "a\u{0}b' OR 1=1 //",
        "Zanzibar \u{1F680} Ünïcödé \u{202E}txt\u{FEFF}",
        "%27%20OR%201%3D1",
        "x\r\nX-Injected: 1",
        "",
        "   ",
    ]
    .map(String::from)
    .to_vec();
    out.push("' OR 1=1 //".repeat(600));
    out.push(format!("{b_memory}' OR 1=1 //"));
    out.push(format!("{b_memory}\"}}) RETURN n //"));
    out
}

/// Numbers put into every number of the JSON bodies.
const NUMBERS: [&str; 6] = [
    "-9223372036854775808",
    "9223372036854775807",
    "18446744073709551615",
    "-1",
    "0",
    "1e308",
];

/// Which hostile strings a slot of the walk (a parameter, a body field, a tool argument, the
/// dev-mode tenant of an operation) gets: every `stride`-th string, from an offset that moves on
/// by one per slot, so each slot still meets strings of every kind (the list is grouped by kind)
/// and every string is tried in many slots. The suite's stride is 3 (the whole walk took 718 s of
/// a 30-minute CI run beside the other tests, 236 s alone; a rotating half still took 438 s of a
/// 28-minute run on 2026-12-07); `EPIGRAPH_INJECTION_STRIDE=1` walks every string everywhere,
/// `=2` a rotating half, a larger one makes a quick local run.
///
/// The suite walked a rotating sixth for a while (2026-12-05), because the whole walk seemed to
/// take over 27 minutes; the cause was one MCP call that never came back (a panicking tool,
/// `epigraph::serve::panics`), not the walk's size. Calls are now bounded ([`CALL_TIMEOUT`])
/// and a panicking tool answers an error.
struct Sample {
    stride: usize,
    slot: usize,
}

/// How long one request or tool call may take before it counts as unanswered.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

impl Sample {
    fn new() -> Self {
        let stride = std::env::var("EPIGRAPH_INJECTION_STRIDE")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(3)
            .max(1);
        Sample { stride, slot: 0 }
    }

    /// The strings of the next slot.
    fn next<'a>(&mut self, hostile: &'a [String]) -> Vec<&'a String> {
        let offset = self.slot % self.stride;
        self.slot += 1;
        hostile.iter().skip(offset).step_by(self.stride).collect()
    }

    /// The fewest strings a slot gets.
    fn least(&self, hostile: &[String]) -> usize {
        hostile.len() / self.stride
    }
}

/// The ids the walk's harmless values point at (tenant A's).
struct Ids {
    /// Two memory objects (a contradiction's sides when there is one).
    m0: String,
    m1: String,
    /// An open question.
    question: String,
    /// A proposal of A, waiting for approval.
    proposal: String,
    /// The name of A's most mentioned entity.
    entity: String,
}

/// A harmless value of an HTTP parameter, by name and path (`None`: left out).
fn benign(name: &str, path: &str, ids: &Ids) -> Option<String> {
    let value = match name {
        "q" | "query" => "Lighthouse Fund SAFE",
        "name" | "subject" => ids.entity.as_str(),
        "from" if path == "/v1/traverse" => ids.entity.as_str(),
        "from" | "node" => ids.m0.as_str(),
        "to" => ids.m1.as_str(),
        "id" if path.contains("proposals") => ids.proposal.as_str(),
        "id" => ids.m0.as_str(),
        "path" => "<MENTIONS",
        "relation" => "CONTRADICTS",
        "types" => "DECISION,EVIDENCE",
        "as_of" => "2027-06-01",
        "since" => "2026-01-01",
        "level" => "memory",
        "mode" => "hybrid",
        "state" => "proposed",
        "stage" => "webhook",
        "source" if path == "/v1/connectors" => "imap",
        "source" => "chat",
        "target" => "probe-target",
        _ => return None,
    };
    Some(value.to_string())
}

/// The JSON bodies of an operation: the documented fields filled with harmless values.
fn bodies(method: &str, path: &str, ids: &Ids) -> Vec<Value> {
    let by = |change: Value| {
        json!({"change": change, "why": "injection probe", "read": [ids.m0],
               "agent": "probe", "model": "probe-model"})
    };
    match (method, path) {
        ("post", "/v1/context") => vec![json!({
            "query": "Lighthouse Fund SAFE", "budget_tokens": 400, "as_of": "2027-06-01",
            "types": "DECISION,EVIDENCE"})],
        ("post", "/v1/reviews") => vec![json!({
            "relation": "CONTRADICTS", "from": ids.m0, "to": ids.m1, "verdict": "confirm",
            "reason": "injection probe", "by": "probe"})],
        ("post", "/v1/proposals") => vec![
            by(json!({"kind": "remember", "memory_type": "OBSERVATION",
                      "text": "Injection probe: the Lighthouse Fund memo was filed.",
                      "title": "probe", "about": ["Lighthouse Fund"],
                      "links": [{"relation": "SUPPORTS", "to": ids.m0}]})),
            by(
                json!({"kind": "edit", "node": ids.m0, "memory_type": "DECISION",
                      "text": "Injection probe edit.", "valid_from": 1_780_000_000_000i64}),
            ),
            by(
                json!({"kind": "judgement", "relation": "SUPPORTS", "from": ids.m0,
                      "to": ids.m1, "verdict": "assert"}),
            ),
        ],
        ("post", p) if p.starts_with("/v1/proposals/") => vec![json!({"reason": "probe"})],
        ("post", "/v1/ingest") => vec![json!({
            "kind": "chat", "source_id": "injection/1", "op": "upsert", "title": "probe",
            "body": "Injection probe: Maya Brandt reviewed the Lighthouse Fund memo.",
            "occurred_at": 1_780_000_000_000i64,
            "authors": [{"name": "Probe Person", "address": "probe@acme.example"}],
            "participants": [{"name": "Other Person", "address": "other@acme.example"}],
            "thread_id": "injection-thread",
            "links": [{"rel": "attachment", "target": "probe.txt",
                       "media_type": "text/plain", "size_bytes": 3}],
            "extras": {"channel": "probe"}})],
        _ => Vec::new(),
    }
}

/// JSON pointers of every scalar inside a value (array elements and object fields included).
fn leaves(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                leaves(item, format!("{at}/{i}"), out);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                leaves(
                    item,
                    format!("{at}/{}", key.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        _ => out.push(at),
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

/// What must never reach tenant A: B's phrases, B's ids, B's tenant name as a value.
struct Secrets {
    ids: Vec<String>,
    tenant: String,
}

impl Secrets {
    /// What of B shows in `text`, beyond the values the request itself `sent` (an answer may
    /// echo them, raw, JSON-escaped or debug-quoted: "no node \"…\" in tenant …").
    fn leak(&self, text: &str, sent: &[String]) -> Option<String> {
        if let Some(phrase) = B_PHRASES.iter().find(|p| text.contains(*p)) {
            return Some(phrase.to_string());
        }
        let text = without_echoes(text, sent);
        if text.contains(&format!("\"{}\"", self.tenant)) {
            return Some(format!("tenant {}", self.tenant));
        }
        self.ids
            .iter()
            .find(|id| text.contains(id.as_str()))
            .cloned()
    }
}

/// `text` without the values a request sent, raw, JSON-escaped or debug-quoted.
fn without_echoes(text: &str, sent: &[String]) -> String {
    let mut text = text.to_string();
    let mut echoes: Vec<String> = Vec::new();
    for value in sent.iter().filter(|v| !v.is_empty()) {
        echoes.push(value.clone());
        let json = serde_json::to_string(value).expect("json");
        echoes.push(json[1..json.len() - 1].to_string());
        let debug = format!("{value:?}");
        echoes.push(debug[1..debug.len() - 1].to_string());
    }
    echoes.sort_by_key(|e| std::cmp::Reverse(e.len()));
    for echo in echoes.iter().filter(|e| !e.is_empty()) {
        text = text.replace(echo.as_str(), "");
    }
    text
}

/// A store's own words in an answer, if any.
fn internals(text: &str) -> Option<&'static str> {
    let lower = text.to_lowercase();
    INTERNALS.iter().copied().find(|w| lower.contains(w))
}

/// What is wrong with one HTTP answer (nothing: empty).
fn judge_http(
    status: u16,
    content_type: &str,
    text: &str,
    stream: bool,
    tenant_asked: bool,
    extra: &[&str],
) -> Vec<String> {
    let mut wrong = Vec::new();
    if status >= 500 {
        wrong.push(format!("a server error {status}"));
    } else if !(200..500).contains(&status) || (300..400).contains(&status) {
        wrong.push(format!("status {status}"));
    }
    if status >= 400 {
        match serde_json::from_str::<Value>(text) {
            Ok(value) => {
                let shape = value.as_object().is_some_and(|o| {
                    o.keys()
                        .all(|k| k == "error" || extra.contains(&k.as_str()))
                }) && value["error"]["code"] == status
                    && value["error"]["message"]
                        .as_str()
                        .is_some_and(|m| !m.is_empty());
                if !shape {
                    wrong.push("an error not in the documented shape".into());
                }
                if !content_type.starts_with("application/json") {
                    wrong.push(format!("an error of content type {content_type:?}"));
                }
            }
            Err(_) => wrong.push("an error that is not JSON".into()),
        }
    } else if status < 300 && !stream && serde_json::from_str::<Value>(text).is_err() {
        wrong.push("an answer that is not JSON".into());
    }
    if tenant_asked && status != 403 {
        wrong.push(format!("a foreign `tenant` answered {status}, not 403"));
    }
    if let Some(word) = internals(text) {
        wrong.push(format!("a store's own error ({word:?})"));
    }
    wrong
}

/// Everything the fingerprint compares, for one tenant: node id → labels and properties (but
/// K and its terms), and every relationship touching the tenant's nodes.
#[derive(Debug, PartialEq, Eq)]
struct TenantPrint {
    nodes: BTreeMap<String, String>,
    relationships: BTreeSet<String>,
}

async fn tenant_print(graph: &neo4rs::Graph, tenant: &str) -> TenantPrint {
    #[derive(Deserialize)]
    struct Node {
        id: String,
        labels: Vec<String>,
        properties: BTreeMap<String, Value>,
    }
    #[derive(Deserialize)]
    struct Rel {
        rel_type: String,
        from: Option<String>,
        to: Option<String>,
        properties: BTreeMap<String, Value>,
    }
    let mut nodes = BTreeMap::new();
    let mut rows = graph
        .execute(
            neo4rs::query(
                "MATCH (n) WHERE n.tenant = $tenant \
                 RETURN n.id AS id, labels(n) AS labels, properties(n) AS properties",
            )
            .param("tenant", tenant),
        )
        .await
        .expect("nodes");
    while let Some(row) = rows.next().await.expect("row") {
        let mut node: Node = row.to().expect("node row");
        node.labels.sort();
        // K and its terms follow the clock (a run recomputes them as days pass): not compared.
        for key in PRIORITY_PROPERTIES.iter().chain([&PRIORITY_HASH]) {
            node.properties.remove(*key);
        }
        let print = format!(
            "{:?} {}",
            node.labels,
            serde_json::to_string(&node.properties).expect("json")
        );
        nodes.insert(node.id, print);
    }
    let mut relationships = BTreeSet::new();
    let mut rows = graph
        .execute(
            neo4rs::query(
                "MATCH (a)-[r]->(b) WHERE a.tenant = $tenant OR b.tenant = $tenant \
                 RETURN type(r) AS rel_type, a.id AS from, b.id AS to, properties(r) AS properties",
            )
            .param("tenant", tenant),
        )
        .await
        .expect("relationships");
    while let Some(row) = rows.next().await.expect("row") {
        let r: Rel = row.to().expect("relationship row");
        relationships.insert(format!(
            "{:?} -[{}]-> {:?} {}",
            r.from,
            r.rel_type,
            r.to,
            serde_json::to_string(&r.properties).expect("json")
        ));
    }
    TenantPrint {
        nodes,
        relationships,
    }
}

/// The test's view of the database (its topic prefix: other processes may write the shared
/// database meanwhile), coarsely: node and relationship counts, nodes per label, the labels and
/// relationship types in use; and the labels and types of the whole database.
#[derive(Debug, PartialEq, Eq)]
struct DatabasePrint {
    nodes: i64,
    relationships: i64,
    per_label: BTreeMap<String, i64>,
    view_types: BTreeSet<String>,
    labels: BTreeSet<String>,
    types: BTreeSet<String>,
}

impl DatabasePrint {
    /// The view's part (what nothing else writes).
    fn view(&self) -> (i64, i64, &BTreeMap<String, i64>, &BTreeSet<String>) {
        (
            self.nodes,
            self.relationships,
            &self.per_label,
            &self.view_types,
        )
    }
}

async fn single<T: serde::de::DeserializeOwned>(
    graph: &neo4rs::Graph,
    cypher: &str,
    tenant: &str,
) -> T {
    scoped(graph, cypher, tenant, "").await
}

/// The one value `x` of a query with parameters `$tenant` and `$view`.
async fn scoped<T: serde::de::DeserializeOwned>(
    graph: &neo4rs::Graph,
    cypher: &str,
    tenant: &str,
    view: &str,
) -> T {
    let mut rows = graph
        .execute(
            neo4rs::query(cypher)
                .param("tenant", tenant)
                .param("view", view),
        )
        .await
        .unwrap_or_else(|e| panic!("{cypher}: {e}"));
    let row = rows.next().await.expect("row").expect("one row");
    row.get::<T>("x").expect("column x")
}

async fn database_print(graph: &neo4rs::Graph, view: &str) -> DatabasePrint {
    let per_label: Vec<(String, i64)> = {
        let mut rows = graph
            .execute(
                neo4rs::query(
                    "MATCH (n) WHERE n.view = $view UNWIND labels(n) AS l RETURN l, count(*) AS c",
                )
                .param("view", view),
            )
            .await
            .expect("labels");
        let mut out = Vec::new();
        while let Some(row) = rows.next().await.expect("row") {
            out.push((row.get("l").expect("l"), row.get("c").expect("c")));
        }
        out
    };
    let set = |v: Vec<String>| v.into_iter().collect::<BTreeSet<String>>();
    DatabasePrint {
        nodes: scoped(
            graph,
            "MATCH (n) WHERE n.view = $view RETURN count(n) AS x",
            "",
            view,
        )
        .await,
        relationships: scoped(
            graph,
            "MATCH (a)-[r]->() WHERE a.view = $view RETURN count(r) AS x",
            "",
            view,
        )
        .await,
        per_label: per_label.into_iter().collect(),
        view_types: set(scoped(
            graph,
            "MATCH (a)-[r]->() WHERE a.view = $view RETURN collect(DISTINCT type(r)) AS x",
            "",
            view,
        )
        .await),
        labels: set(single(
            graph,
            "CALL db.labels() YIELD label RETURN collect(label) AS x",
            "",
        )
        .await),
        types: set(single(
            graph,
            "CALL db.relationshipTypes() YIELD relationshipType RETURN collect(relationshipType) AS x",
            "",
        )
        .await),
    }
}

/// Nodes and relationships of the test's view outside `tenant`.
async fn outside(graph: &neo4rs::Graph, tenant: &str, view: &str) -> (i64, i64) {
    (
        scoped(
            graph,
            "MATCH (n) WHERE n.view = $view AND (n.tenant IS NULL OR n.tenant <> $tenant) \
             RETURN count(n) AS x",
            tenant,
            view,
        )
        .await,
        scoped(
            graph,
            "MATCH (a)-[r]->(b) WHERE a.view = $view AND (a.tenant IS NULL OR a.tenant <> $tenant) \
             AND (b.tenant IS NULL OR b.tenant <> $tenant) RETURN count(r) AS x",
            tenant,
            view,
        )
        .await,
    )
}

/// LanceDB's memory rows and chunks: of the test's view, and of each tenant.
async fn lance_print(env: &TestEnv, view: &str, tenants: &[&str]) -> Vec<(String, usize, usize)> {
    let lance = env.lance().await;
    let mut out = Vec::new();
    for (what, column) in [(view, "view")]
        .into_iter()
        .chain(tenants.iter().map(|t| (*t, "tenant")))
    {
        let filter = format!("{column} = '{what}'");
        out.push((
            what.to_string(),
            lance.count(Some(filter.clone())).await.expect("rows"),
            lance.count_chunks(Some(filter)).await.expect("chunks"),
        ));
    }
    out
}

/// The ids of a tenant's nodes of one label.
async fn node_ids(graph: &neo4rs::Graph, tenant: &str, label: &str) -> Vec<String> {
    assert!(label.chars().all(|c| c.is_ascii_alphabetic()));
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

/// One HTTP request: `(status, content type, body)`, or why nothing answered.
async fn send(
    client: &reqwest::Client,
    method: &str,
    url: reqwest::Url,
    query: &[(String, String)],
    body: Option<&Value>,
    token: &str,
    stream: bool,
) -> Result<(u16, String, String), String> {
    let mut request = match method {
        "get" => client.get(url),
        "post" => client.post(url),
        _ => client.delete(url),
    }
    .query(query)
    .bearer_auth(token);
    if let Some(body) = body {
        request = request.json(body);
    }
    let mut response = request
        .send()
        .await
        .map_err(|e| format!("no answer: {e}"))?;
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let text = if stream && status == 200 {
        // A stream: read its first event (or what it sends in 1.5 s).
        let mut text = String::new();
        let until = Instant::now() + Duration::from_millis(1500);
        while Instant::now() < until && !text.contains("\n\n") {
            match tokio::time::timeout(Duration::from_millis(300), response.chunk()).await {
                Ok(Ok(Some(chunk))) => text.push_str(&String::from_utf8_lossy(&chunk)),
                Ok(_) => break,
                Err(_) => {}
            }
        }
        text
    } else {
        response
            .text()
            .await
            .map_err(|e| format!("answer cut: {e}"))?
    };
    Ok((status, content_type, text))
}

/// `base` + `path` with `{name}` segments replaced by `values` (percent-encoded).
fn url_of(base: &str, path: &str, values: &BTreeMap<String, String>) -> Option<reqwest::Url> {
    let mut url = reqwest::Url::parse(base).expect("base");
    {
        let mut segments = url.path_segments_mut().expect("a base");
        segments.pop_if_empty();
        for segment in path.trim_start_matches('/').split('/') {
            match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                Some(name) => {
                    segments.push(values.get(name)?);
                }
                None => {
                    segments.push(segment);
                }
            }
        }
    }
    Some(url)
}

/// One request of the walk: what it varies, its parameters (name → place and value) and body.
type Variant = (String, BTreeMap<String, (String, String)>, Option<Value>);

/// Tallies of the walk, and what went wrong.
#[derive(Default)]
struct Tally {
    requests: usize,
    by_status: BTreeMap<u16, usize>,
    failures: Vec<String>,
    /// The slowest requests and calls: (seconds, what).
    slowest: Vec<(f64, String)>,
}

/// A request slower than this is printed as it ends (the whole walk once took over 27 min).
const SLOW_SECONDS: f64 = 3.0;

impl Tally {
    fn fail(&mut self, what: String) {
        self.failures.push(what);
    }

    /// [`send`], timed ([`Tally::timed`]); `None` (and a failure noted) when nothing answered.
    #[allow(clippy::too_many_arguments)]
    async fn send(
        &mut self,
        label: &str,
        client: &reqwest::Client,
        method: &str,
        url: reqwest::Url,
        query: &[(String, String)],
        body: Option<&Value>,
        token: &str,
        stream: bool,
    ) -> Option<(u16, String, String)> {
        let sent_at = Instant::now();
        let answer = send(client, method, url, query, body, token, stream).await;
        self.timed(label, sent_at.elapsed());
        answer
            .map_err(|error| self.fail(format!("{label}: {error}")))
            .ok()
    }

    /// Notes how long `what` took; keeps the ten slowest.
    fn timed(&mut self, what: &str, took: Duration) {
        let seconds = took.as_secs_f64();
        if seconds > SLOW_SECONDS {
            eprintln!("injection: slow: {seconds:.1} s {}", short(what));
        }
        self.slowest.push((seconds, short(what)));
        self.slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
        self.slowest.truncate(10);
    }
}

/// A short, printable form of a hostile value for failure messages.
fn short(value: &str) -> String {
    let mut s: String = format!("{value:?}").chars().take(80).collect();
    if value.len() > 78 {
        s.push('…');
    }
    s
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_strings_in_every_parameter_change_nothing_and_leak_nothing() {
    let _guard = serial().await;
    let started = Instant::now();
    let env = TestEnv::new("injection");
    let a = env.tenant.clone();
    let b = format!("{a}-b");
    let a_lines = [
        event("document", "term-sheet", 0, SHEET),
        event("email", "memo", 2, MEMO),
        event("chat", "atlas/1", 0, PLANNED),
        event("chat", "atlas/2", 8, SLIPPED),
        event("chat", "atlas/3", 3, QUESTION),
    ];
    epigraph_tests::ingest_two_tenants(&env, &a_lines, &b);
    let graph = neo4j();
    let b_memories = node_ids(&graph, &b, "Memory").await;
    let b_entities = node_ids(&graph, &b, "Entity").await;
    let a_memories = node_ids(&graph, &a, "Memory").await;
    let a_questions = node_ids(&graph, &a, "Question").await;
    assert!(
        !b_memories.is_empty() && !b_entities.is_empty() && a_memories.len() >= 2,
        "both tenants have a graph"
    );
    assert!(!a_questions.is_empty(), "A has an open question");

    // People's proposals wait for a reviewer; agents' (MCP) apply at once, so that hostile
    // notes reach the stores.
    let config = env.dir.path().join("serve.toml");
    std::fs::write(
        &config,
        format!(
            "[[serve.tokens]]\ntoken = \"token-a\"\ntenant = \"{a}\"\nrole = \"reviewer\"\n\n\
             [[serve.tokens]]\ntoken = \"token-b\"\ntenant = \"{b}\"\nrole = \"reviewer\"\n\n\
             [[serve.ingest_tokens]]\ntoken = \"ingest-a\"\ntenant = \"{a}\"\n\n\
             [serve]\nreport_usage = false\n\n\
             [governance]\nperson = \"approval\"\nagent = \"immediate\"\n"
        ),
    )
    .expect("config");
    let server = env.serve_with(&["--config", config.to_str().expect("utf-8")]);
    let base = server.base.clone();

    // B's own token finds B (the positive control), and B has a proposal waiting.
    let (status, found) =
        http_get_with(&format!("{base}/v1/search?q={MARK}&k=20"), Some("token-b"));
    assert_eq!(status, 200, "{found}");
    assert!(
        B_PHRASES.iter().any(|p| found.to_string().contains(p)),
        "B sees B: {found}"
    );
    let (status, b_proposal) = http_post(
        &format!("{base}/v1/proposals"),
        Some("token-b"),
        &json!({"change": {"kind": "remember", "memory_type": "OBSERVATION",
                           "text": "Zanzibar wire instructions are signed by Ines."},
                "why": "injection test"})
        .to_string(),
    );
    assert_eq!(status, 201, "{b_proposal}");
    let b_proposal = b_proposal["id"].as_str().expect("id").to_string();
    // B's first memory id is part of hostile strings, which A's own stored proposals, letters
    // and notes may show (escaped, cut short) later: its text is what gives it away.
    let mut secret_ids = b_memories[1..].to_vec();
    secret_ids.extend(b_entities.iter().cloned());
    secret_ids.push(b_proposal.clone());
    let secrets = Secrets {
        ids: secret_ids,
        tenant: b.clone(),
    };
    assert!(
        secrets.leak(&found.to_string(), &[MARK.into()]).is_some(),
        "the leak check sees B in B's answer"
    );

    // A's harmless values: the sides of a contradiction, a question, a waiting proposal.
    let (status, pairs) = http_get_with(&format!("{base}/v1/contradictions"), Some("token-a"));
    assert_eq!(status, 200, "{pairs}");
    let (m0, m1) = match pairs["contradictions"].get(0) {
        Some(pair) => (
            pair["a"]["id"].as_str().expect("id").to_string(),
            pair["b"]["id"].as_str().expect("id").to_string(),
        ),
        None => (a_memories[0].clone(), a_memories[1].clone()),
    };
    let (status, proposal) = http_post(
        &format!("{base}/v1/proposals"),
        Some("token-a"),
        &json!({"change": {"kind": "remember", "memory_type": "OBSERVATION",
                           "text": "Injection probe: the term sheet was countersigned."},
                "why": "injection test"})
        .to_string(),
    );
    assert_eq!(status, 201, "{proposal}");
    let ids = Ids {
        m0,
        m1,
        question: a_questions[0].clone(),
        proposal: proposal["id"].as_str().expect("id").to_string(),
        entity: single(
            &graph,
            "MATCH (e:Entity) WHERE e.tenant = $tenant \
             RETURN e.name AS x ORDER BY coalesce(e.mentions, 0) DESC, e.name LIMIT 1",
            &a,
        )
        .await,
    };
    let hostile = hostile(&b_memories[0]);
    let mut sample = Sample::new();

    // The fingerprints before the walk.
    let view: String = single(
        &graph,
        "MATCH (n) WHERE n.tenant = $tenant RETURN head(collect(DISTINCT n.view)) AS x",
        &a,
    )
    .await;
    let a_before = tenant_print(&graph, &a).await;
    let b_before = tenant_print(&graph, &b).await;
    let db_before = database_print(&graph, &view).await;
    let outside_before = outside(&graph, &a, &view).await;
    let lance_before = lance_print(&env, &view, &[a.as_str(), b.as_str()]).await;
    assert!(
        !a_before.nodes.is_empty() && !b_before.relationships.is_empty(),
        "the fingerprints hold the tenants' graphs"
    );

    // 1. Every operation of the OpenAPI document, every parameter, every hostile string.
    let walk_started = Instant::now();
    let (status, openapi) = http_get_with(&format!("{base}/openapi.json"), None);
    assert_eq!(status, 200);
    let client = reqwest::Client::builder()
        .timeout(CALL_TIMEOUT)
        .build()
        .expect("client");
    let mut tally = Tally::default();
    let mut operations = 0usize;
    let mut body_schemas_checked = 0usize;
    let mut operation_list: Vec<(String, String, Value)> = Vec::new();
    for (path, item) in openapi["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("operations") {
            if ["get", "post", "delete"].contains(&method.as_str()) {
                operation_list.push((method.clone(), path.clone(), operation.clone()));
            }
        }
    }
    // The webhook is not in the document (it has its own tokens): walked the same way.
    operation_list.push((
        "post".into(),
        "/v1/ingest".into(),
        json!({"parameters": []}),
    ));
    for (method, path, operation) in &operation_list {
        operations += 1;
        let token = if path == "/v1/ingest" {
            "ingest-a"
        } else {
            "token-a"
        };
        let stream = path == "/v1/dashboard/stream";
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
        let templates = bodies(method, path, &ids);
        // Every field of the documented request body has a value in the templates.
        if let Some(name) = first_ref(&operation["requestBody"]) {
            let schema = &openapi["components"]["schemas"][name.as_str()];
            if let Some(properties) = schema["properties"].as_object() {
                body_schemas_checked += 1;
                for field in properties.keys() {
                    let filled = templates.iter().any(|t| t.get(field).is_some());
                    assert!(
                        filled || field == "extraction",
                        "{method} {path}: the walk fills no `{field}` of {name}"
                    );
                }
            }
        }
        // The harmless request, then one request per (parameter or body field, hostile value).
        let baseline: BTreeMap<String, (String, String)> = params
            .iter()
            .filter_map(|(name, place)| {
                benign(name, path, &ids).map(|v| (name.clone(), (place.clone(), v)))
            })
            .collect();
        let mut variants: Vec<Variant> = Vec::new();
        let templates: Vec<Option<Value>> = if templates.is_empty() {
            vec![None]
        } else {
            templates.into_iter().map(Some).collect()
        };
        variants.push(("(harmless)".into(), baseline.clone(), templates[0].clone()));
        for (name, place) in &params {
            for value in sample.next(&hostile) {
                let mut values = baseline.clone();
                values.insert(name.clone(), (place.clone(), value.clone()));
                variants.push((
                    format!("{place} {name}={}", short(value)),
                    values,
                    templates[0].clone(),
                ));
            }
        }
        for template in templates.iter().flatten() {
            let mut pointers = Vec::new();
            leaves(template, String::new(), &mut pointers);
            for pointer in &pointers {
                for value in sample.next(&hostile) {
                    let mut body = template.clone();
                    *body.pointer_mut(pointer).expect("leaf") = Value::String(value.clone());
                    variants.push((
                        format!("body {pointer}={}", short(value)),
                        baseline.clone(),
                        Some(body),
                    ));
                }
                // A number: the extremes too (instants and budgets at the ends of i64 and u64).
                if template.pointer(pointer).is_some_and(Value::is_number) {
                    for number in NUMBERS {
                        let mut body = template.clone();
                        *body.pointer_mut(pointer).expect("leaf") =
                            serde_json::from_str(number).expect("a number");
                        variants.push((
                            format!("body {pointer}={number}"),
                            baseline.clone(),
                            Some(body),
                        ));
                    }
                }
            }
        }
        if path == "/v1/ingest" {
            // A hostile key of the source-specific fields, a hostile expected version; and
            // every event an item of its own (unless its source id is the hostile value), so
            // that every hostile text reaches the graph.
            for value in sample.next(&hostile) {
                let mut body = templates[0].clone().expect("a body");
                let mut extras = serde_json::Map::new();
                extras.insert(value.clone(), json!("probe"));
                body["extras"] = Value::Object(extras);
                variants.push((
                    format!("body /extras key {}", short(value)),
                    baseline.clone(),
                    Some(body.clone()),
                ));
                body["extras"] = json!({});
                body["if_version"] = json!(value);
                variants.push((
                    format!("body /if_version={}", short(value)),
                    baseline.clone(),
                    Some(body),
                ));
            }
            for (i, (what, _, body)) in variants.iter_mut().enumerate() {
                if let Some(body) = body
                    && !what.starts_with("body /source_id=")
                {
                    body["source_id"] = json!(format!("injection/{i}"));
                }
            }
        }
        for (what, values, body) in variants {
            let path_values: BTreeMap<String, String> = values
                .iter()
                .filter(|(_, (place, _))| place == "path")
                .map(|(n, (_, v))| (n.clone(), v.clone()))
                .collect();
            let query: Vec<(String, String)> = values
                .iter()
                .filter(|(_, (place, _))| place == "query")
                .map(|(n, (_, v))| (n.clone(), v.clone()))
                .collect();
            let Some(url) = url_of(&base, path, &path_values) else {
                tally.fail(format!(
                    "{method} {path} {what}: no value for a path parameter"
                ));
                continue;
            };
            tally.requests += 1;
            let label = format!("{} {path} {what}", method.to_uppercase());
            let Some((status, content_type, text)) = tally
                .send(
                    &label,
                    &client,
                    method,
                    url,
                    &query,
                    body.as_ref(),
                    token,
                    stream,
                )
                .await
            else {
                continue;
            };
            *tally.by_status.entry(status).or_default() += 1;
            let tenant_asked = query.iter().any(|(n, _)| n == "tenant");
            let mut sent: Vec<String> = values.values().map(|(_, v)| v.clone()).collect();
            if let Some(body) = &body {
                strings(body, &mut sent);
            }
            // A stale write to the webhook also says the item's key and current version.
            let extra: &[&str] = if path == "/v1/ingest" && status == 409 {
                &["key", "current_version"]
            } else {
                &[]
            };
            let mut wrong = judge_http(status, &content_type, &text, stream, tenant_asked, extra);
            if let Some(leak) = secrets.leak(&text, &sent) {
                wrong.push(format!("B's {leak}"));
            }
            // The harmless request must work, or the hostile ones prove little (a decision on a
            // decided proposal, a review of an edge that is not there may be refused).
            let may_fail = path.contains("/proposals/")
                || path == "/v1/reviews"
                || (path == "/v1/connectors" && method == "delete");
            if what == "(harmless)" && !(200..300).contains(&status) && !may_fail {
                wrong.push(format!("the harmless request answered {status}"));
            }
            if !wrong.is_empty() {
                let text: String = text.chars().take(300).collect();
                tally.fail(format!("{label}: {} ({status}: {text})", wrong.join("; ")));
            }
        }
    }
    // An instant is a value, never a switch: before 1970 nothing of A was valid yet (the reads
    // once took a negative instant for "no instant" and answered today's state).
    let (status, now) = http_get_with(
        &format!("{base}/v1/priorities?as_of=2027-06-01"),
        Some("token-a"),
    );
    assert!(
        status == 200 && now["priorities"][0]["t_valid"].is_i64(),
        "memory objects valid in 2027 carry their t_valid: {now}"
    );
    for at in ["-1", "-999999999999"] {
        let at_ms: i64 = at.parse().expect("ms");
        let (status, answer) =
            http_get_with(&format!("{base}/v1/priorities?as_of={at}"), Some("token-a"));
        let late: Vec<&Value> = answer["priorities"]
            .as_array()
            .map(|cards| {
                cards
                    .iter()
                    .filter(|c| c["t_valid"].as_i64().is_some_and(|t| t > at_ms))
                    .collect()
            })
            .unwrap_or_default();
        if status != 200 || !late.is_empty() {
            tally.fail(format!(
                "GET /v1/priorities?as_of={at}: {status}, {} memory objects not valid yet: {}",
                late.len(),
                answer.to_string().chars().take(300).collect::<String>()
            ));
        }
        let url = reqwest::Url::parse_with_params(
            &format!("{base}/v1/entities"),
            [("name", ids.entity.as_str()), ("as_of", at)],
        )
        .expect("url");
        let (status, answer) = http_get_with(url.as_str(), Some("token-a"));
        let relations: usize = answer["entities"]
            .as_array()
            .map(|es| {
                es.iter()
                    .flat_map(|e| e["relations"].as_array().cloned().unwrap_or_default())
                    .filter(|r| r["t_valid"].as_i64().is_some_and(|t| t > at_ms))
                    .count()
            })
            .unwrap_or_default();
        if status != 200 || relations > 0 {
            tally.fail(format!(
                "GET /v1/entities?as_of={at}: {status}, {relations} relations not begun yet"
            ));
        }
        tally.requests += 2;
    }
    let http_requests = tally.requests;
    let http_time = walk_started.elapsed();
    eprintln!(
        "injection: HTTP walk: {http_requests} requests in {:.0} s",
        http_time.as_secs_f64()
    );
    assert!(operations >= 26, "the walk covered {operations} operations");
    assert!(
        body_schemas_checked >= 3,
        "{body_schemas_checked} body schemas"
    );

    // 2. Every MCP tool, every argument, every hostile string.
    let mcp_started = Instant::now();
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("{base}/mcp")).auth_header("token-a"),
    );
    let mcp = ().serve(transport).await.expect("MCP initialize");
    let tools = mcp.list_all_tools().await.expect("tools/list");
    assert!(tools.len() >= 18, "{} tools", tools.len());
    let mut calls = 0usize;
    let mut tool_errors = 0usize;
    for tool in &tools {
        let name = tool.name.to_string();
        let properties = tool
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let baseline: serde_json::Map<String, Value> = properties
            .keys()
            .filter_map(|arg| mcp_benign(&name, arg, &ids).map(|v| (arg.clone(), v)))
            .collect();
        let mut variants = vec![("(harmless)".to_string(), baseline.clone())];
        for (arg, schema) in &properties {
            let array = schema.to_string().contains("\"array\"");
            for value in sample.next(&hostile) {
                let mut args = baseline.clone();
                let filled = if array { json!([value]) } else { json!(value) };
                args.insert(arg.clone(), filled);
                variants.push((format!("{arg}={}", short(value)), args));
            }
        }
        for (what, args) in variants {
            calls += 1;
            let sent_at = Instant::now();
            let call = mcp
                .call_tool(CallToolRequestParams::new(name.clone()).with_arguments(args.clone()));
            let Ok(result) = tokio::time::timeout(CALL_TIMEOUT, call).await else {
                tally.fail(format!(
                    "MCP {name} {what}: no answer in {} s",
                    CALL_TIMEOUT.as_secs()
                ));
                continue;
            };
            tally.timed(&format!("MCP {name} {what}"), sent_at.elapsed());
            let mut sent = Vec::new();
            strings(&Value::Object(args.clone()), &mut sent);
            let mut wrong = Vec::new();
            let text = match &result {
                Ok(result) => {
                    if result.is_error == Some(true) {
                        tool_errors += 1;
                    }
                    serde_json::to_string(result).expect("json")
                }
                Err(rmcp::ServiceError::McpError(error)) => {
                    tool_errors += 1;
                    if error.code == ErrorCode::INTERNAL_ERROR {
                        wrong.push("an internal error".to_string());
                    }
                    error.message.to_string()
                }
                Err(error) => {
                    wrong.push(format!("no answer: {error}"));
                    error.to_string()
                }
            };
            if let Some(word) = internals(&text) {
                wrong.push(format!("a store's own error ({word:?})"));
            }
            if let Some(leak) = secrets.leak(&text, &sent) {
                wrong.push(format!("B's {leak}"));
            }
            if what == "(harmless)"
                && result.is_err()
                && !HARMLESS_MAY_FAIL.contains(&name.as_str())
            {
                wrong.push("the harmless call failed".into());
            }
            if !wrong.is_empty() {
                let text: String = text.chars().take(300).collect();
                tally.fail(format!("MCP {name} {what}: {} ({text})", wrong.join("; ")));
            }
        }
    }
    let mcp_time = mcp_started.elapsed();
    eprintln!(
        "injection: MCP walk: {calls} calls in {:.0} s",
        mcp_time.as_secs_f64()
    );
    assert!(calls >= 18 * sample.least(&hostile), "{calls} tool calls");

    // 3. Right after the walk: the query service wrote nothing to Neo4j or LanceDB.
    let a_after = tenant_print(&graph, &a).await;
    let b_after = tenant_print(&graph, &b).await;
    let db_after = database_print(&graph, &view).await;
    let lance_after = lance_print(&env, &view, &[a.as_str(), b.as_str()]).await;
    compare_prints("A right after the walk", &a_before, &a_after, &mut tally);
    compare_prints("B right after the walk", &b_before, &b_after, &mut tally);
    if db_after.view() != db_before.view() {
        tally.fail(format!(
            "the database changed during the walk: {db_before:?} → {db_after:?}"
        ));
    }
    if lance_after != lance_before {
        tally.fail(format!(
            "LanceDB changed during the walk: {lance_before:?} → {lance_after:?}"
        ));
    }

    // 4. The pipeline carries what the walk wrote (A's hostile notes, events, reviews) into
    //    the stores: B and everything outside A unchanged, A's nodes all still there, every
    //    label and relationship type a plain identifier of the vocabulary. Rows are written
    //    without their vectors: what is checked is what reaches the graph and which rows exist,
    //    and embedding hundreds of hostile notes in a debug build only costs time. That hostile
    //    texts embed to finite unit vectors without moving their batch neighbours is the
    //    embedder's own test (`sinks/src/embed/embedder.rs`, `hostile_texts_give_finite_…`).
    let run_started = Instant::now();
    env.run_until_idle_without_vectors();
    let run_time = run_started.elapsed();
    eprintln!("injection: pipeline run: {:.0} s", run_time.as_secs_f64());
    let a_run = tenant_print(&graph, &a).await;
    let b_run = tenant_print(&graph, &b).await;
    let db_run = database_print(&graph, &view).await;
    let outside_run = outside(&graph, &a, &view).await;
    let lance_run = lance_print(&env, &view, &[a.as_str(), b.as_str()]).await;
    compare_prints("B after the pipeline run", &b_before, &b_run, &mut tally);
    if outside_run != outside_before {
        tally.fail(format!(
            "nodes and relationships outside A changed: {outside_before:?} → {outside_run:?}"
        ));
    }
    if lance_run[2] != lance_before[2] {
        tally.fail(format!(
            "B's LanceDB rows changed: {:?} → {:?}",
            lance_before[2], lance_run[2]
        ));
    }
    // The view's rows but A's.
    let others = |p: &[(String, usize, usize)]| (p[0].1 - p[1].1, p[0].2 - p[1].2);
    if others(&lance_run[..]) != others(&lance_before[..]) {
        tally.fail(format!(
            "LanceDB rows outside A changed: {lance_before:?} → {lance_run:?}"
        ));
    }
    for (id, print) in &a_before.nodes {
        let labels = |p: &str| p.split(" {").next().unwrap_or_default().to_string();
        match a_run.nodes.get(id) {
            None => tally.fail(format!("A's node {id} is gone after the run")),
            Some(now) if labels(now.as_str()) != labels(print.as_str()) => tally.fail(format!(
                "A's node {id} changed labels: {} → {}",
                labels(print.as_str()),
                labels(now.as_str())
            )),
            Some(_) => {}
        }
    }
    let new_a_nodes = a_run.nodes.len() - a_before.nodes.len().min(a_run.nodes.len());
    assert!(
        new_a_nodes > 0,
        "the hostile writes reached the graph (else step 4 proves nothing)"
    );
    let hostile_in_graph = a_run
        .nodes
        .values()
        .filter(|p| p.contains("DETACH DELETE") || p.contains("OR '1'='1"))
        .count();
    assert!(hostile_in_graph > 0, "hostile text is stored as data");
    let ontology = epigraph_operators::Ontology::bundled();
    let mut known_labels: BTreeSet<String> = db_before.labels.clone();
    known_labels.extend(["Node", "Source", "Memory", "Entity", "Claim"].map(String::from));
    known_labels.extend(["Chat", "Email", "Calendar", "Document"].map(String::from));
    known_labels.extend(
        epigraph_schemas::memory::EpistemicType::ALL
            .iter()
            .map(|t| t.label().to_string()),
    );
    known_labels.extend(ontology.kinds.iter().map(|k| k.name.clone()));
    let mut known_types: BTreeSet<String> = db_before.types.clone();
    known_types.extend(ontology.relations.iter().map(|r| r.rel_type()));
    known_types.extend(ontology.edges.iter().map(|e| e.name.clone()));
    // The structural types the pipeline writes: not only those an earlier test left in Neo4j (on
    // a fresh database this test may run first).
    known_types.extend(epigraph_operators::extract::edge::STRUCTURAL.map(String::from));
    known_types.insert(epigraph_operators::resolve::SAME_AS.to_string());
    known_types.extend(
        epigraph_operators::epistemic::judge::LinkKind::ALL.map(|k| k.rel_type().to_string()),
    );
    let plain = |name: &str| {
        name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    for label in &db_run.labels {
        if !plain(label.as_str()) || !known_labels.contains(label) {
            tally.fail(format!("label {label:?} is not of the vocabulary"));
        }
    }
    for rel_type in &db_run.types {
        if !plain(rel_type.as_str()) || !known_types.contains(rel_type) {
            tally.fail(format!(
                "relationship type {rel_type:?} is not of the vocabulary"
            ));
        }
    }
    let injected: i64 = single(
        &graph,
        "MATCH (n) WHERE n.injected IS NOT NULL RETURN count(n) AS x",
        "",
    )
    .await;
    if injected > 0 {
        tally.fail(format!("{injected} nodes carry the injected property"));
    }

    // B's own view is what it was.
    let (status, found_after) =
        http_get_with(&format!("{base}/v1/search?q={MARK}&k=20"), Some("token-b"));
    assert_eq!(status, 200, "{found_after}");
    let ids_of = |v: &Value| -> Vec<String> {
        v["results"]
            .as_array()
            .map(|rs| {
                let mut ids: Vec<String> = rs
                    .iter()
                    .filter_map(|r| r["id"].as_str().map(str::to_string))
                    .collect();
                ids.sort();
                ids
            })
            .unwrap_or_default()
    };
    if ids_of(&found) != ids_of(&found_after) {
        tally.fail(format!(
            "B's search changed: {:?} → {:?}",
            ids_of(&found),
            ids_of(&found_after)
        ));
    }
    let (status, view) = http_get_with(
        &format!("{base}/v1/proposals/{b_proposal}"),
        Some("token-b"),
    );
    assert_eq!(
        (status, view["state"].clone()),
        (200, json!("proposed")),
        "B's proposal is untouched: {view}"
    );

    // 5. Development mode (no tokens, loopback): the `tenant` parameter chooses the tenant,
    //    so there it reaches the stores' filters. Every GET operation with every hostile string
    //    as its tenant: refused (400) unless it is a valid tenant name, and nothing of A or B.
    let dev = env.serve();
    let dev_started = Instant::now();
    let mut dev_requests = 0usize;
    // Both tenants' nodes but B's first memory, part of two hostile strings (a refusal echoes
    // the tenant as sent, percent-encoded).
    let mut a_ids: Vec<String> = a_before.nodes.keys().cloned().collect();
    a_ids.extend(b_before.nodes.keys().cloned());
    a_ids.retain(|id| *id != b_memories[0]);
    // Every operation gets the odd names and the two aimed at A and B, and a sample of the
    // hostile strings ([`Sample`]).
    let always: Vec<String> = ODD_TENANTS
        .map(String::from)
        .into_iter()
        .chain([format!("{a}' OR '1'='1"), format!("{b}') OR tenant <> ('")])
        .collect();
    let mut tenants_tried = BTreeSet::new();
    for (_, path, operation) in operation_list.iter().filter(|(m, _, _)| m == "get") {
        let stream = path == "/v1/dashboard/stream";
        let mut query: Vec<(String, String)> = Vec::new();
        let mut path_values = BTreeMap::new();
        for p in operation["parameters"].as_array().into_iter().flatten() {
            let (name, place) = (
                p["name"].as_str().unwrap_or_default(),
                p["in"].as_str().unwrap_or_default(),
            );
            if let Some(value) = benign(name, path, &ids) {
                if place == "path" {
                    path_values.insert(name.to_string(), value);
                } else {
                    query.push((name.to_string(), value));
                }
            }
        }
        let tenants: Vec<&String> = sample.next(&hostile).into_iter().chain(&always).collect();
        tenants_tried.extend(tenants.iter().map(|t| t.to_string()));
        for tenant in tenants {
            let Some(url) = url_of(&dev.base, path, &path_values) else {
                continue;
            };
            let mut query = query.clone();
            query.push(("tenant".into(), tenant.clone()));
            dev_requests += 1;
            let label = format!("dev GET {path} tenant={}", short(tenant));
            let Some((status, content_type, text)) = tally
                .send(&label, &client, "get", url, &query, None, "none", stream)
                .await
            else {
                continue;
            };
            *tally.by_status.entry(status).or_default() += 1;
            let mut wrong = judge_http(status, &content_type, &text, stream, false, &[]);
            if !epigraph_schemas::topics::valid_tenant(tenant) && status != 400 {
                wrong.push(format!("an invalid tenant answered {status}, not 400"));
            }
            let sent: Vec<String> = query
                .iter()
                .map(|(_, v)| v.clone())
                .chain(path_values.values().cloned())
                .collect();
            let rest = without_echoes(&text, &sent);
            if let Some(phrase) = A_PHRASES
                .iter()
                .chain(&B_PHRASES)
                .find(|p| rest.contains(*p))
            {
                wrong.push(format!("a tenant's statement ({phrase:?})"));
            }
            if let Some(id) = a_ids.iter().find(|id| rest.contains(id.as_str())) {
                wrong.push(format!("a tenant's node {id}"));
            }
            if !wrong.is_empty() {
                let text: String = text.chars().take(300).collect();
                tally.fail(format!("{label}: {} ({status}: {text})", wrong.join("; ")));
            }
        }
    }
    let dev_time = dev_started.elapsed();
    drop(dev);

    eprintln!(
        "injection: development mode: {dev_requests} requests with {} tenants in {:.0} s",
        tenants_tried.len(),
        dev_time.as_secs_f64()
    );
    eprintln!(
        "injection: {} hostile strings; {http_requests} HTTP requests over {operations} operations \
         in {:.0} s (statuses {:?}); {calls} MCP calls over {} tools in {:.0} s ({tool_errors} \
         tool errors); pipeline run {:.0} s; {new_a_nodes} new nodes of A; db {} → {} nodes, \
         {} → {} relationships; {} labels, {} relationship types; total {:.0} s; {} failures",
        hostile.len(),
        http_time.as_secs_f64(),
        tally.by_status,
        tools.len(),
        mcp_time.as_secs_f64(),
        run_time.as_secs_f64(),
        db_before.nodes,
        db_run.nodes,
        db_before.relationships,
        db_run.relationships,
        db_run.labels.len(),
        db_run.types.len(),
        started.elapsed().as_secs_f64(),
        tally.failures.len(),
    );
    eprintln!("injection: the slowest requests and calls:");
    for (seconds, what) in &tally.slowest {
        eprintln!("  {seconds:6.2} s  {what}");
    }
    assert!(
        tally.failures.is_empty(),
        "{} failures, the first 150:\n{}",
        tally.failures.len(),
        tally
            .failures
            .iter()
            .take(150)
            .map(|f| f.chars().take(400).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Tools whose harmless call may be refused (a decision on a proposal the agent cannot make,
/// a review of an edge that may not exist, an edit of a node that does not exist).
const HARMLESS_MAY_FAIL: [&str; 4] = [
    "decide_proposal",
    "review_judgement",
    "dispute",
    "propose_edit",
];

/// A harmless value of an MCP argument (`None`: left out).
fn mcp_benign(tool: &str, arg: &str, ids: &Ids) -> Option<Value> {
    Some(match arg {
        "query" => json!("Lighthouse Fund SAFE"),
        "name" | "subject" => json!(ids.entity),
        "from" if tool == "traverse" => json!(ids.entity),
        "from" => json!(ids.m0),
        "to" => json!(ids.m1),
        "path" => json!("<MENTIONS"),
        // Edits are proposed on a node that does not exist: an applied edit would change A's
        // nodes, which the last step checks are all still there.
        "node" => json!("injection-no-such-node"),
        "id" if tool.contains("proposal") => json!(ids.proposal),
        "id" => json!(ids.m0),
        "question" => json!(ids.question),
        "relation" if tool == "review_judgement" => json!("CONTRADICTS"),
        "relation" => json!("SUPPORTS"),
        "verdict" => json!("confirm"),
        "decision" => json!("approve"),
        "memory_type" => json!("OBSERVATION"),
        "text" => json!("Injection probe: Maya Brandt filed the Lighthouse Fund memo."),
        "title" | "reason" | "why" | "agent" | "model" => json!("injection probe"),
        "about" => json!(["Lighthouse Fund"]),
        "supersedes" => json!([]),
        "read" => json!([ids.m0]),
        "types" => json!("DECISION,EVIDENCE"),
        "as_of" => json!("2027-06-01"),
        "level" => json!("memory"),
        "state" => json!("proposed"),
        _ => return None,
    })
}

/// The first `$ref` schema name inside a value.
fn first_ref(value: &Value) -> Option<String> {
    match value {
        Value::Object(map) => {
            if let Some(r) = map.get("$ref").and_then(Value::as_str) {
                return r.rsplit('/').next().map(str::to_string);
            }
            map.values().find_map(first_ref)
        }
        Value::Array(items) => items.iter().find_map(first_ref),
        _ => None,
    }
}

/// Record how two fingerprints of a tenant differ.
fn compare_prints(what: &str, before: &TenantPrint, after: &TenantPrint, tally: &mut Tally) {
    if before == after {
        return;
    }
    let gone: Vec<&String> = before
        .nodes
        .keys()
        .filter(|id| !after.nodes.contains_key(*id))
        .collect();
    let added: Vec<&String> = after
        .nodes
        .keys()
        .filter(|id| !before.nodes.contains_key(*id))
        .collect();
    let changed: Vec<&String> = before
        .nodes
        .iter()
        .filter(|(id, p)| after.nodes.get(*id).is_some_and(|q| q != *p))
        .map(|(id, _)| id)
        .collect();
    let rels_gone = before
        .relationships
        .difference(&after.relationships)
        .count();
    let rels_added = after
        .relationships
        .difference(&before.relationships)
        .count();
    tally.fail(format!(
        "{what}: nodes gone {gone:?}, added {added:?}, changed {changed:?}; relationships \
         gone {rels_gone}, added {rels_added}"
    ));
}
