//! Helpers of the end-to-end tests: they drive the real `epigraph` binary against the real Kafka,
//! Neo4j and LanceDB that `deploy/local/services.sh up` starts (the test script does that).
//!
//! Every test uses its own tenant, state folder and Kafka topics (a topic prefix of its own,
//! deleted when the test ends) and takes [`serial`] for its whole body: `epigraph run`
//! reconciles the shared Neo4j and LanceDB with its topics, so two runs must not interleave.

pub mod corpus;
pub mod disk;
pub mod servers;

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::LazyLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use epigraph_sinks::lance::{LanceConfig, LanceSink};
use epigraph_sinks::neo4j::{Neo4jConfig, connect_graph};
use epigraph_sources::kafka::KafkaConfig;

static SERIAL: LazyLock<tokio::sync::Mutex<()>> = LazyLock::new(|| tokio::sync::Mutex::new(()));

/// Hold this for the whole test (an async lock: the tests await while holding it).
pub async fn serial() -> tokio::sync::MutexGuard<'static, ()> {
    SERIAL.lock().await
}

/// The `epigraph` binary built next to the test executable (`cargo build --bins` first; a test
/// runs from `target/<profile>/deps/`, a load run of `benches` from `target/<profile>/`), or
/// `$EPIGRAPH_BIN`.
pub fn binary() -> PathBuf {
    if let Some(path) = std::env::var_os("EPIGRAPH_BIN") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("test executable path");
    let here = exe.parent().expect("target/<profile>/…");
    let beside = here.join("epigraph");
    if beside.is_file() {
        return beside;
    }
    let binary = here
        .parent()
        .expect("target/<profile>/deps/..")
        .join("epigraph");
    assert!(
        binary.is_file(),
        "{} is missing: run `cargo build --bins` before the tests",
        binary.display()
    );
    binary
}

/// The Confluent-compatible API of the schema registry `deploy/local/services.sh up` runs
/// (Apicurio), or `$EPIGRAPH_TEST_SCHEMA_REGISTRY_URL`.
pub fn schema_registry_url() -> String {
    std::env::var("EPIGRAPH_TEST_SCHEMA_REGISTRY_URL")
        .unwrap_or_else(|_| "http://127.0.0.1:8081/apis/ccompat/v7".into())
}

/// A unique tenant name for one test.
pub fn unique_tenant(prefix: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_nanos();
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        nanos % 1_000_000_000_000
    )
}

/// The environment of one test: its own state folder, the tests' LanceDB folder.
#[derive(Debug)]
pub struct TestEnv {
    /// Temporary folder holding state and documents.
    pub dir: tempfile::TempDir,
    /// The tenant of this test.
    pub tenant: String,
    /// LanceDB folder used by the binary.
    pub lance_dir: PathBuf,
    /// Kafka settings of this test: its own topic prefix.
    pub kafka: KafkaConfig,
}

impl TestEnv {
    /// A new environment with a unique tenant.
    pub fn new(prefix: &str) -> Self {
        let home = epigraph_sinks::embed::default_home();
        let tenant = unique_tenant(prefix);
        TestEnv {
            dir: tempfile::tempdir().expect("tempdir"),
            kafka: KafkaConfig {
                topic_prefix: format!("epigraph-test.{tenant}"),
                ..KafkaConfig::default()
            },
            tenant,
            lance_dir: home.join("test-lancedb"),
        }
    }

    /// This environment with the schema registry of the test services
    /// ([`schema_registry_url`]): the binary and every producer made from `self.kafka` write
    /// the registry wire format.
    pub fn with_schema_registry(mut self) -> Self {
        self.kafka.schema_registry.url = schema_registry_url();
        self
    }

    /// The folder of documents of this test.
    pub fn docs(&self) -> PathBuf {
        let docs = self.dir.path().join("docs");
        std::fs::create_dir_all(&docs).expect("docs folder");
        docs
    }

    /// A command running the binary in this environment.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(binary());
        command
            .args(args)
            .env("EPIGRAPH_STATE_DIR", self.dir.path().join("state"))
            .env("EPIGRAPH_LANCEDB__DIR", &self.lance_dir)
            .env("EPIGRAPH_KAFKA__TOPIC_PREFIX", &self.kafka.topic_prefix)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null());
        if self.kafka.schema_registry.enabled() {
            command.env(
                "EPIGRAPH_KAFKA__SCHEMA_REGISTRY__URL",
                &self.kafka.schema_registry.url,
            );
        }
        command
    }

    /// Run the binary to completion; panics with its output when it fails.
    pub fn epigraph(&self, args: &[&str]) -> String {
        self.epigraph_with_env(args, &[])
    }

    /// [`Self::epigraph`] with more environment variables (`EPIGRAPH_KAFKA__…` overrides).
    pub fn epigraph_with_env(&self, args: &[&str], vars: &[(&str, &str)]) -> String {
        let mut command = self.command(args);
        command.envs(vars.iter().copied());
        let output: Output = command.output().expect("spawning epigraph");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "epigraph {args:?} failed ({}):\nstdout: {stdout}\nstderr: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        stdout
    }

    /// `epigraph ingest docs <docs> --tenant <tenant>`, parsed summary.
    pub fn ingest_docs(&self) -> serde_json::Value {
        let docs = self.docs();
        let out = self.epigraph(&[
            "ingest",
            "docs",
            docs.to_str().expect("utf-8 path"),
            "--tenant",
            &self.tenant,
        ]);
        last_json_line(&out)
    }

    /// `epigraph run --until-idle`, parsed report.
    pub fn run_until_idle(&self) -> serde_json::Value {
        last_json_line(&self.epigraph(&["run", "--until-idle"]))
    }

    /// [`Self::run_until_idle`] without embedding: for tests of what reaches the graph, not of
    /// vectors.
    pub fn run_until_idle_without_vectors(&self) -> serde_json::Value {
        let config = self.dir.path().join("no-embed.toml");
        std::fs::write(&config, "[lancedb]\nembed = false\n").expect("writing no-embed.toml");
        let config = config.to_str().expect("a UTF-8 path");
        last_json_line(&self.epigraph(&["--config", config, "run", "--until-idle"]))
    }

    /// How many `:Source` nodes of `kind` (a label: `Email`, `Calendar`, …) this tenant has in
    /// Neo4j.
    pub async fn source_count(&self, kind: &str) -> i64 {
        let cypher = format!("MATCH (s:Source:{kind} {{tenant: $tenant}}) RETURN count(s) AS n");
        neo4j_count(&neo4j(), &cypher, &self.tenant).await
    }

    /// Open the LanceDB sink the binary writes (full-text only: no model needed to read).
    pub async fn lance(&self) -> LanceSink {
        let config = LanceConfig {
            dir: self.lance_dir.display().to_string(),
            embed: false,
            read_consistency_ms: 0,
            ..LanceConfig::default()
        };
        LanceSink::open(&config, None)
            .await
            .expect("opening LanceDB")
    }

    /// Start `epigraph serve` on a free port; killed on drop.
    pub fn serve(&self) -> Server {
        self.serve_with(&[])
    }

    /// Start `epigraph <global args> serve` on a free port (e.g. `--config file.toml`).
    pub fn serve_with(&self, global_args: &[&str]) -> Server {
        self.serve_with_env(global_args, &[])
    }

    /// [`TestEnv::serve_with`] with more environment variables (`EPIGRAPH_SERVE__…`).
    pub fn serve_with_env(&self, global_args: &[&str], envs: &[(&str, &str)]) -> Server {
        let port = TcpListener::bind("127.0.0.1:0")
            .expect("free port")
            .local_addr()
            .expect("addr")
            .port();
        let listen = format!("127.0.0.1:{port}");
        let mut args: Vec<&str> = global_args.to_vec();
        args.extend(["serve", "--listen", &listen]);
        let log_path = self.dir.path().join(format!("serve-{port}.log"));
        let log = std::fs::File::create(&log_path).expect("serve log");
        let child = self
            .command(&args)
            .envs(envs.iter().copied())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawning serve");
        let mut server = Server {
            child,
            base: format!("http://{listen}"),
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            if http_get(&format!("{}/healthz", server.base))
                .is_some_and(|(status, _)| status == 200)
            {
                return server;
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                let log = std::fs::read_to_string(&log_path).unwrap_or_default();
                panic!("epigraph serve exited ({status}) before answering:\n{log}");
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("epigraph serve did not answer /healthz within 120 s");
    }
}

impl Drop for TestEnv {
    /// Deletes the test's topics (best effort: a leftover topic only costs disk).
    fn drop(&mut self) {
        let kafka = self.kafka.clone();
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(epigraph_sources::kafka::delete_topics(&kafka))
        })
        .join();
    }
}

/// A running `epigraph serve`.
#[derive(Debug)]
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
}

impl Server {
    /// Asks the server to stop (SIGTERM, a graceful shutdown) and waits up to `within` for it
    /// to exit: its exit status, or `None` if it was still running then (it is killed).
    pub fn terminate(mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status();
        assert!(sent.is_ok_and(|s| s.success()), "kill -TERM {pid}");
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }

    /// GET a path and parse the JSON answer.
    pub fn get(&self, path_and_query: &str) -> serde_json::Value {
        let (status, body) = http_get(&format!("{}{path_and_query}", self.base)).expect("request");
        assert_eq!(status, 200, "GET {path_and_query}: {body}");
        body
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// GET a URL and parse the JSON answer: `(status, body)`, or `None` when nothing answered.
///
/// The blocking client runs on its own thread so that async tests may call it.
pub fn http_get(url: &str) -> Option<(u16, serde_json::Value)> {
    let url = url.to_string();
    std::thread::spawn(move || {
        let response = reqwest::blocking::get(url).ok()?;
        let status = response.status().as_u16();
        let body = response.json().unwrap_or(serde_json::Value::Null);
        Some((status, body))
    })
    .join()
    .expect("http thread")
}

/// GET a URL with an optional bearer token: `(status, answer)`.
pub fn http_get_with(url: &str, token: Option<&str>) -> (u16, serde_json::Value) {
    let (url, token) = (url.to_string(), token.map(str::to_string));
    std::thread::spawn(move || {
        let client = reqwest::blocking::Client::new();
        let mut request = client.get(url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().expect("GET");
        let status = response.status().as_u16();
        (status, response.json().unwrap_or(serde_json::Value::Null))
    })
    .join()
    .expect("http thread")
}

/// POST a JSON body with an optional bearer token: `(status, answer)`.
pub fn http_post(url: &str, token: Option<&str>, body: &str) -> (u16, serde_json::Value) {
    let (url, token, body) = (url.to_string(), token.map(str::to_string), body.to_string());
    std::thread::spawn(move || {
        let client = reqwest::blocking::Client::new();
        let mut request = client
            .post(url)
            .header("content-type", "application/json")
            .body(body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().expect("POST");
        let status = response.status().as_u16();
        (status, response.json().unwrap_or(serde_json::Value::Null))
    })
    .join()
    .expect("http thread")
}

/// DELETE with an optional bearer token: `(status, answer)`.
pub fn http_delete(url: &str, token: Option<&str>) -> (u16, serde_json::Value) {
    let (url, token) = (url.to_string(), token.map(str::to_string));
    std::thread::spawn(move || {
        let client = reqwest::blocking::Client::new();
        let mut request = client.delete(url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().expect("DELETE");
        let status = response.status().as_u16();
        (status, response.json().unwrap_or(serde_json::Value::Null))
    })
    .join()
    .expect("http thread")
}

/// The first dead letter on the test's DLQ topic that `wanted` accepts (reads from the
/// beginning; panics when the topic goes quiet without one).
pub async fn find_dead_letter(
    env: &TestEnv,
    what: &str,
    wanted: impl Fn(&epigraph_sources::kafka::DeadLetter) -> bool,
) -> epigraph_sources::kafka::DeadLetter {
    use epigraph_sources::kafka::{EventConsumer, Polled};
    let config = KafkaConfig {
        group_id: unique_tenant("tests-dlq"),
        ..env.kafka.clone()
    };
    let consumer =
        EventConsumer::from_beginning(&config, &[config.dlq_topic()]).expect("DLQ consumer");
    loop {
        match consumer.poll(Duration::from_secs(10)).await.expect("poll") {
            Polled::Message(message) => {
                let payload = message.payload.as_deref().unwrap_or_default();
                let letter = serde_json::from_slice(payload).expect("dead letters are JSON");
                if wanted(&letter) {
                    return letter;
                }
            }
            Polled::Idle => panic!("no dead letter for {what}"),
        }
    }
}

/// The latest status report of every connector on the test's `<prefix>.connectors` topic (read
/// from the beginning until the topic is quiet for 3 s), by key.
pub async fn connector_reports(
    env: &TestEnv,
) -> std::collections::BTreeMap<String, epigraph_sources::kafka::ConnectorStatus> {
    use epigraph_sources::kafka::{EventConsumer, Polled};
    let config = KafkaConfig {
        group_id: unique_tenant("tests-connectors"),
        ..env.kafka.clone()
    };
    let consumer = EventConsumer::from_beginning(&config, &[config.connectors_topic()])
        .expect("connectors consumer");
    let mut latest = std::collections::BTreeMap::new();
    while let Polled::Message(message) = consumer.poll(Duration::from_secs(3)).await.expect("poll")
    {
        let key = String::from_utf8_lossy(message.key.as_deref().unwrap_or_default()).into_owned();
        match message.payload.as_deref() {
            Some(payload) => {
                let status = serde_json::from_slice(payload).expect("connector reports are JSON");
                latest.insert(key, status);
            }
            None => {
                latest.remove(&key);
            }
        }
    }
    latest
}

/// `epigraph ingest <args…> --tenant <tenant>`, parsed summary.
pub fn ingest(env: &TestEnv, args: &[&str]) -> serde_json::Value {
    let mut all: Vec<&str> = vec!["ingest"];
    all.extend_from_slice(args);
    all.extend(["--tenant", env.tenant.as_str()]);
    last_json_line(&env.epigraph(&all))
}

/// Two tenants side by side: `a_lines` for the environment's own tenant, the
/// [`corpus::zanzibar`] lines for `b`, both published with `epigraph ingest events` and built by
/// one `epigraph run --until-idle`.
pub fn ingest_two_tenants(env: &TestEnv, a_lines: &[String], b: &str) {
    let a_file = env.dir.path().join("a.jsonl");
    std::fs::write(&a_file, a_lines.join("\n") + "\n").expect("events");
    ingest(env, &["events", a_file.to_str().expect("utf-8")]);
    let b_file = env.dir.path().join("b.jsonl");
    std::fs::write(&b_file, corpus::zanzibar().join("\n") + "\n").expect("events");
    env.epigraph(&[
        "ingest",
        "events",
        b_file.to_str().expect("utf-8"),
        "--tenant",
        b,
    ]);
    env.run_until_idle();
}

/// `bytes` of base64-like text that lz4 cannot shrink much (a seeded pseudo-random stream, 76
/// characters a line, lines ended by `line_end`): the broker sees nearly all of it.
pub fn incompressible_text(bytes: usize, seed: u64, line_end: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut state = seed;
    let mut out = String::with_capacity(bytes + bytes / 76 * line_end.len() + line_end.len());
    while out.len() < bytes {
        // Knuth's MMIX linear congruential generator; the high bits are the random ones.
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        out.push(ALPHABET[(state >> 58) as usize] as char);
        if out.len() % (76 + line_end.len()) == 76 {
            out.push_str(line_end);
        }
    }
    out
}

/// The last line of `out` that parses as JSON.
pub fn last_json_line(out: &str) -> serde_json::Value {
    out.lines()
        .rev()
        .find_map(|line| serde_json::from_str(line).ok())
        .unwrap_or_else(|| panic!("no JSON line in output: {out}"))
}

/// A Neo4j client with the default (local script) settings.
pub fn neo4j() -> neo4rs::Graph {
    connect_graph(&Neo4jConfig::default()).expect("connecting to Neo4j")
}

/// Run a read query returning one integer column `n`.
pub async fn neo4j_count(graph: &neo4rs::Graph, cypher: &str, tenant: &str) -> i64 {
    let mut rows = graph
        .execute(neo4rs::query(cypher).param("tenant", tenant))
        .await
        .expect("neo4j query");
    let row = rows.next().await.expect("neo4j row").expect("one row");
    row.get::<i64>("n").expect("column n")
}

/// Texts of the tenant's memory nodes in Neo4j, sorted.
pub async fn neo4j_memory_texts(graph: &neo4rs::Graph, tenant: &str) -> Vec<String> {
    let mut rows = graph
        .execute(
            neo4rs::query("MATCH (m:Memory {tenant: $tenant}) RETURN m.text AS text ORDER BY text")
                .param("tenant", tenant),
        )
        .await
        .expect("neo4j query");
    let mut texts = Vec::new();
    while let Some(row) = rows.next().await.expect("neo4j row") {
        texts.push(row.get::<String>("text").expect("text"));
    }
    texts
}

/// A loopback address (`127.0.0.1:PORT`) on a port free at the time of the call, for a process
/// the test starts to listen on (`run.metrics_listen`).
pub fn free_local_addr() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("a free port")
        .local_addr()
        .expect("its address")
        .port();
    format!("127.0.0.1:{port}")
}

/// `GET /metrics` of a running pipeline as text, or `None` while nothing answers.
pub fn scrape_metrics(addr: &str) -> Option<String> {
    http_text(addr, "/metrics").map(|(_, body)| body)
}

/// `GET <path>` of `addr` (`127.0.0.1:port`): the status and the body as text, or `None` while
/// nothing answers.
pub fn http_text(addr: &str, path: &str) -> Option<(u16, String)> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some((status, body.to_string()))
}

/// The value of the first sample of metric `name` in Prometheus text: `name` is a metric name
/// (`epigraph_epochs_total`), a name with its labels (`…{kind="Source"}`) or a name and an
/// opening brace (`epigraph_consumer_lag{`: any label set).
pub fn metric_sample(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find(|line| {
            line.strip_prefix(name).is_some_and(|rest| {
                name.ends_with('{') || rest.starts_with(' ') || rest.starts_with('{')
            })
        })
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|value| value.parse().ok())
}

/// One server-sent event: its name and its data as JSON.
pub type SentEvent = (String, serde_json::Value);

/// Opens the server-sent event stream at `url` with `token`: the HTTP status, and the events
/// as they arrive (the channel closes when the stream ends).
pub fn open_event_stream(url: String, token: &str) -> (u16, std::sync::mpsc::Receiver<SentEvent>) {
    use std::io::{BufRead, BufReader};
    let (status_tx, status_rx) = std::sync::mpsc::channel();
    let (tx, rx) = std::sync::mpsc::channel();
    let token = token.to_string();
    std::thread::spawn(move || {
        let client = reqwest::blocking::Client::builder()
            .timeout(None)
            .build()
            .expect("client");
        let response = client.get(url).bearer_auth(token).send().expect("request");
        let _ = status_tx.send(response.status().as_u16());
        let (mut name, mut data) = (String::new(), String::new());
        for line in BufReader::new(response).lines() {
            let Ok(line) = line else { break };
            if let Some(value) = line.strip_prefix("event:") {
                name = value.trim().to_string();
            } else if let Some(value) = line.strip_prefix("data:") {
                data.push_str(value.strip_prefix(' ').unwrap_or(value));
            } else if line.is_empty() && !data.is_empty() {
                let json = serde_json::from_str(&data).expect("event data is JSON");
                if tx.send((std::mem::take(&mut name), json)).is_err() {
                    break;
                }
                data.clear();
            }
        }
    });
    let status = status_rx
        .recv_timeout(Duration::from_secs(30))
        .expect("an answer");
    (status, rx)
}
