//! Secrets never reach logs, metrics or error messages: `epigraph ingest`, `run`, `serve` and a
//! `rebuild` that cannot reach Neo4j run with read and ingest tokens and a Neo4j password set
//! (configuration file and `EPIGRAPH_NEO4J__PASSWORD`, all digits), debug logging on; the test causes errors
//! (missing, unknown and near-miss tokens, a token of the wrong kind, bad bodies, a refused
//! connection) and scans every stdout and stderr, both `/metrics` and every answer body for the
//! secret strings. `serve` runs over HTTPS (`[serve.tls]`, the test certificate of
//! `tests/fixtures/tls/`), as it would beyond loopback; plain HTTP to its port is not served.

use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use epigraph_tests::{TestEnv, http_get, metric_sample, scrape_metrics, serial};

/// A request of the test: what it tries, URL, method, token, body, the status expected.
type Asked<'a> = (
    &'a str,
    String,
    &'a str,
    Option<String>,
    Option<&'a str>,
    u16,
);

fn free_addr() -> String {
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("free port")
        .local_addr()
        .expect("addr")
        .port();
    format!("127.0.0.1:{port}")
}

/// The CA of the test certificate `epigraph serve` presents here (`tests/fixtures/tls/`).
fn test_ca() -> reqwest::Certificate {
    reqwest::Certificate::from_pem(include_bytes!("../fixtures/tls/ca.pem")).expect("test CA")
}

/// One request over HTTPS, trusting the test CA: `(status, body as text)`.
fn call(url: String, method: &str, token: Option<String>, body: Option<&str>) -> (u16, String) {
    let (method, body) = (method.to_string(), body.map(str::to_string));
    std::thread::spawn(move || {
        let client = reqwest::blocking::Client::builder()
            .tls_built_in_root_certs(false)
            .add_root_certificate(test_ca())
            .build()
            .expect("client");
        let mut request = client.request(method.parse().expect("method"), url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body);
        }
        let response = request.send().expect("request");
        (
            response.status().as_u16(),
            response.text().unwrap_or_default(),
        )
    })
    .join()
    .expect("http thread")
}

/// A command of `env` with the secrets' configuration and debug logging.
fn command(env: &TestEnv, config: &str, password: &str, args: &[&str]) -> Command {
    let mut all = vec!["--config", config];
    all.extend_from_slice(args);
    let mut command = env.command(&all);
    command.env("EPIGRAPH_NEO4J__PASSWORD", password).env(
        "RUST_LOG",
        "debug,lance=info,lancedb=info,h2=info,hyper=info",
    );
    command
}

/// Run to completion: its stdout and stderr together, and whether it succeeded.
fn output_of(mut command: Command) -> (bool, String) {
    let output = command.output().expect("spawning epigraph");
    (
        output.status.success(),
        format!(
            "{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn secrets_stay_out_of_logs_metrics_and_error_messages() {
    let _serial = serial().await;
    let env = TestEnv::new("e2e-secrets");
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let read_token = format!("rdTok-{nanos:x}-Kq9");
    let ingest_token = format!("inTok-{nanos:x}-Vw3");
    // All digits with a leading zero: a password a TOML-typed reading of the variable would
    // take for a number.
    let password = format!("0{:015}", nanos % 1_000_000_000_000_000);
    let secrets = [&read_token, &ingest_token, &password];
    let config_path = env.dir.path().join("epigraph.toml");
    std::fs::write(
        &config_path,
        format!(
            "[[serve.tokens]]\ntoken = \"{read_token}\"\ntenant = \"{0}\"\n\n\
             [[serve.ingest_tokens]]\ntoken = \"{ingest_token}\"\ntenant = \"{0}\"\n\n\
             [serve]\nreport_usage = false\n\n\
             [serve.tls]\ncert_file = \"{1}/cert.pem\"\nkey_file = \"{1}/key.pem\"\n",
            env.tenant,
            epigraph_schemas::manifest_dir!()
                .join("fixtures/tls")
                .display(),
        ),
    )
    .expect("config");
    let config = config_path.to_str().expect("utf-8");
    let mut seen: Vec<(String, String)> = Vec::new();

    // Ingest: a good event and a bad line (dead-lettered).
    let events = env.dir.path().join("events.jsonl");
    std::fs::write(
        &events,
        "{\"kind\": \"document\", \"source_id\": \"a.md\", \"body\": \"We decided to ship Atlas in June.\"}\n{\"kind\": \"fax\"}\n",
    )
    .unwrap();
    let (ok, out) = output_of(command(
        &env,
        config,
        &password,
        &[
            "ingest",
            "events",
            events.to_str().unwrap(),
            "--tenant",
            &env.tenant,
        ],
    ));
    assert!(ok, "{out}");
    seen.push(("ingest events".into(), out));

    // The pipeline, with its metrics scraped while it runs.
    let metrics_addr = free_addr();
    let run_log = env.dir.path().join("run.log");
    let mut run = command(&env, config, &password, &["run"])
        .env("EPIGRAPH_RUN__METRICS_LISTEN", &metrics_addr)
        .stdout(std::fs::File::create(&run_log).unwrap())
        .stderr(std::fs::File::create(env.dir.path().join("run.err")).unwrap())
        .spawn()
        .expect("spawning epigraph run");
    let deadline = Instant::now() + Duration::from_secs(180);
    let metrics = loop {
        if let Some(text) = scrape_metrics(&metrics_addr)
            && metric_sample(&text, "epigraph_graph_elements{kind=\"Source\"}") == Some(1.0)
        {
            break text;
        }
        assert!(Instant::now() < deadline, "the run never wrote the source");
        if let Ok(Some(status)) = run.try_wait() {
            panic!("epigraph run exited early: {status}");
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    let _ = Command::new("kill")
        .args(["-TERM", &run.id().to_string()])
        .status();
    let _ = run.wait();
    seen.push(("run /metrics".into(), metrics));
    for file in ["run.log", "run.err"] {
        let text = std::fs::read_to_string(env.dir.path().join(file)).unwrap_or_default();
        seen.push((format!("run {file}"), text));
    }

    // The query service, asked wrongly in every way a client can.
    let listen = free_addr();
    let mut serve = command(&env, config, &password, &["serve", "--listen", &listen])
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(env.dir.path().join("serve.out")).unwrap())
        .stderr(std::fs::File::create(env.dir.path().join("serve.err")).unwrap())
        .spawn()
        .expect("spawning serve");
    // Served over HTTPS ([serve.tls]): the tokens below travel encrypted.
    let base = format!("https://{listen}");
    let healthy = || {
        let url = format!("{base}/healthz");
        std::thread::spawn(move || {
            reqwest::blocking::Client::builder()
                .tls_built_in_root_certs(false)
                .add_root_certificate(test_ca())
                .timeout(Duration::from_secs(5))
                .build()
                .expect("client")
                .get(url)
                .send()
                .is_ok_and(|r| r.status().is_success())
        })
        .join()
        .expect("http thread")
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    while !healthy() {
        assert!(Instant::now() < deadline, "serve did not come up");
        if let Ok(Some(status)) = serve.try_wait() {
            panic!("serve exited: {status}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let url = |path: &str| format!("{base}{path}");
    let some = |s: &String| Some(s.clone());
    let near_miss = |s: &String| Some(format!("{s}-wrong"));
    let requests: Vec<Asked<'_>> = vec![
        (
            "no token",
            url("/v1/search?q=atlas"),
            "GET",
            None,
            None,
            401,
        ),
        (
            "near-miss read token",
            url("/v1/search?q=atlas"),
            "GET",
            near_miss(&read_token),
            None,
            401,
        ),
        (
            "ingest token on a read",
            url("/v1/search?q=atlas"),
            "GET",
            some(&ingest_token),
            None,
            401,
        ),
        (
            "token of another tenant",
            url("/v1/search?q=atlas&tenant=elsewhere"),
            "GET",
            some(&read_token),
            None,
            403,
        ),
        (
            "malformed body",
            url("/v1/context"),
            "POST",
            some(&read_token),
            Some("{"),
            400,
        ),
        (
            "read token on the webhook",
            url("/v1/ingest"),
            "POST",
            some(&read_token),
            Some("{}"),
            401,
        ),
        (
            "near-miss ingest token",
            url("/v1/ingest"),
            "POST",
            near_miss(&ingest_token),
            Some("{}"),
            401,
        ),
        (
            "invalid webhook event",
            url("/v1/ingest"),
            "POST",
            some(&ingest_token),
            Some("{\"kind\": \"fax\"}"),
            400,
        ),
        (
            "valid webhook event",
            url("/v1/ingest"),
            "POST",
            some(&ingest_token),
            Some("{\"kind\": \"chat\", \"source_id\": \"m1\", \"body\": \"Hello.\"}"),
            202,
        ),
        (
            "a search",
            url("/v1/search?q=atlas"),
            "GET",
            some(&read_token),
            None,
            200,
        ),
        (
            "dead letters",
            url("/v1/dead-letters"),
            "GET",
            some(&read_token),
            None,
            200,
        ),
        ("serve /metrics", url("/metrics"), "GET", None, None, 200),
    ];
    for (what, url, method, token, body, status) in requests {
        let (got, text) = call(url, method, token, body);
        assert_eq!(got, status, "{what}: {text}");
        seen.push((what.to_string(), text));
    }
    // Plain HTTP to the HTTPS port gets no answer; serving goes on.
    assert!(
        http_get(&format!("http://{listen}/healthz")).is_none_or(|(status, _)| status != 200),
        "plain HTTP must not be served on the HTTPS port"
    );
    assert!(healthy(), "still serving HTTPS after a plain-HTTP client");
    let _ = Command::new("kill")
        .args(["-TERM", &serve.id().to_string()])
        .status();
    let _ = serve.wait();
    for file in ["serve.out", "serve.err"] {
        let text = std::fs::read_to_string(env.dir.path().join(file)).unwrap_or_default();
        seen.push((format!("serve {file}"), text));
    }

    // A Neo4j that cannot be reached, with the password set.
    let mut rebuild = command(
        &env,
        config,
        &password,
        &["rebuild", "--tenant", &env.tenant],
    );
    rebuild.env("EPIGRAPH_NEO4J__URI", "bolt://127.0.0.1:1");
    let (ok, out) = output_of(rebuild);
    assert!(!ok && out.contains("Neo4j"), "{out}");
    seen.push(("rebuild without Neo4j".into(), out));

    // The scan: real output was seen (logs at debug, metrics, bodies), and no secret in it.
    let all: usize = seen.iter().map(|(_, text)| text.len()).sum();
    assert!(all > 10_000, "too little output to scan: {all} bytes");
    let serve_log = &seen
        .iter()
        .find(|(what, _)| what == "serve serve.err")
        .expect("serve's log")
        .1;
    assert!(serve_log.contains("DEBUG"), "debug logging was on");
    for (what, text) in &seen {
        for secret in secrets {
            assert!(
                !text.contains(secret.as_str()),
                "{what} contains a secret:\n{text}"
            );
        }
    }
}
