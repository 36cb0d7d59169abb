//! Every error a client can cause is JSON in the documented shape, `{"error": {"code": <status>,
//! "message": "…"}}`, with `application/json`: malformed, mistyped and oversized bodies, a body
//! without a JSON content type, bad query strings and path segments, unknown routes, wrong
//! methods, the MCP transport's refusals, missing and unknown tokens (`epigraph serve` with tokens, against the real stores).

use epigraph_tests::TestEnv;

/// One request: `(status, content type, body as text)`.
fn call(
    base: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<(&str, Vec<u8>)>,
) -> (u16, String, String) {
    let (url, method, token) = (
        format!("{base}{path}"),
        method.to_string(),
        token.map(str::to_string),
    );
    let body = body.map(|(content_type, bytes)| (content_type.to_string(), bytes));
    std::thread::spawn(move || {
        let client = reqwest::blocking::Client::new();
        let mut request = client.request(method.parse().expect("method"), url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some((content_type, bytes)) = body {
            if !content_type.is_empty() {
                request = request.header("content-type", content_type.as_str());
            }
            request = request.body(bytes);
        }
        let response = request.send().expect("request");
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        (status, content_type, response.text().unwrap_or_default())
    })
    .join()
    .expect("http thread")
}

/// Assert the answer is the documented JSON error of `status`; returns its message.
fn assert_json_error(what: &str, answer: (u16, String, String), status: u16) -> String {
    let (code, content_type, body) = answer;
    assert_eq!(code, status, "{what}: {body}");
    assert!(
        content_type.starts_with("application/json"),
        "{what}: content type {content_type:?}, body {body:?}"
    );
    let value: serde_json::Value =
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{what}: {e}: {body:?}"));
    assert_eq!(value["error"]["code"], status, "{what}: {value}");
    let message = value["error"]["message"].as_str().unwrap_or_default();
    assert!(!message.is_empty(), "{what}: {value}");
    assert_eq!(
        value.as_object().map(|o| o.len()),
        Some(1),
        "{what}: only `error`: {value}"
    );
    message.to_string()
}

#[test]
fn every_client_error_is_json_in_the_documented_shape() {
    let env = TestEnv::new("e2e-errors");
    let config = env.dir.path().join("serve.toml");
    std::fs::write(
        &config,
        format!(
            "[[serve.tokens]]\ntoken = \"read-token\"\ntenant = \"{0}\"\n\n\
             [[serve.ingest_tokens]]\ntoken = \"ingest-token\"\ntenant = \"{0}\"\n\n\
             [serve]\nreport_usage = false\nmax_body_bytes = 4096\n",
            env.tenant
        ),
    )
    .expect("config");
    let server = env.serve_with(&["--config", config.to_str().expect("utf-8")]);
    let base = server.base.as_str();
    let read = Some("read-token");
    let json = |text: &str| Some(("application/json", text.as_bytes().to_vec()));

    // Bodies.
    let message = assert_json_error(
        "malformed JSON body",
        call(base, "POST", "/v1/context", read, json("{not json")),
        400,
    );
    assert!(message.contains("JSON"), "{message}");
    assert_json_error(
        "mistyped JSON body",
        call(base, "POST", "/v1/context", read, json(r#"{"query": 5}"#)),
        422,
    );
    assert_json_error(
        "body without a JSON content type",
        call(
            base,
            "POST",
            "/v1/context",
            read,
            Some(("", br#"{"query": "x"}"#.to_vec())),
        ),
        415,
    );
    let big = format!(r#"{{"query": "{}"}}"#, "x".repeat(10_000));
    assert_json_error(
        "body over serve.max_body_bytes",
        call(base, "POST", "/v1/context", read, json(&big)),
        413,
    );
    assert_json_error(
        "webhook body over serve.max_body_bytes",
        call(base, "POST", "/v1/ingest", Some("ingest-token"), json(&big)),
        413,
    );
    assert_json_error(
        "invalid webhook event",
        call(
            base,
            "POST",
            "/v1/ingest",
            Some("ingest-token"),
            json("[1]"),
        ),
        400,
    );
    assert_json_error(
        "malformed review",
        call(base, "POST", "/v1/reviews", read, json("{")),
        400,
    );

    // Query strings and paths.
    assert_json_error(
        "mistyped query parameter",
        call(base, "GET", "/v1/search?q=atlas&k=many", read, None),
        400,
    );
    assert_json_error(
        "unknown query parameter",
        call(base, "GET", "/v1/search?q=atlas&colour=red", read, None),
        400,
    );
    assert_json_error(
        "missing query parameter",
        call(base, "GET", "/v1/search", read, None),
        400,
    );
    assert_json_error(
        "bad query of the dead letters",
        call(base, "GET", "/v1/dead-letters?limit=-1", read, None),
        400,
    );
    assert_json_error(
        "path segment that is not UTF-8",
        call(base, "GET", "/v1/nodes/%FF%FE", read, None),
        400,
    );

    // Routes and methods.
    let message = assert_json_error(
        "unknown route",
        call(base, "GET", "/v2/nothing", None, None),
        404,
    );
    assert!(message.contains("/v2/nothing"), "{message}");
    assert_json_error(
        "unknown route under /v1",
        call(base, "GET", "/v1/nothing", read, None),
        404,
    );
    assert_json_error(
        "unknown file of the workspace",
        call(base, "GET", "/ui/nothing.js", None, None),
        404,
    );
    assert_json_error(
        "wrong method",
        call(base, "DELETE", "/healthz", None, None),
        405,
    );
    assert_json_error(
        "wrong method on a read",
        call(base, "PUT", "/v1/search?q=x", read, None),
        405,
    );

    // The MCP transport's own refusals.
    assert_json_error(
        "MCP request that does not accept event streams",
        call(base, "POST", "/mcp", read, json("{}")),
        406,
    );

    // Tokens.
    assert_json_error(
        "missing token",
        call(base, "GET", "/v1/search?q=atlas", None, None),
        401,
    );
    assert_json_error(
        "unknown token",
        call(base, "GET", "/v1/search?q=atlas", Some("guess"), None),
        401,
    );
    assert_json_error(
        "token of another tenant",
        call(
            base,
            "GET",
            "/v1/search?q=atlas&tenant=someone-else",
            read,
            None,
        ),
        403,
    );
    assert_json_error(
        "webhook without a token",
        call(base, "POST", "/v1/ingest", None, json("{}")),
        401,
    );
}
