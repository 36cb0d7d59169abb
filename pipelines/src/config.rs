//! `epigraph.toml` and `EPIGRAPH_*` environment variables.
//!
//! Precedence: defaults (which match `deploy/local/services.sh`) < the TOML file < environment
//! variables. Nested keys use a double underscore: `EPIGRAPH_KAFKA__BOOTSTRAP=host:9092`,
//! `EPIGRAPH_NEO4J__PASSWORD=…`, `EPIGRAPH_LANCEDB__DIR=…`, `EPIGRAPH_MODEL__DIR=…`.

use std::path::{Path, PathBuf};

use epigraph_sinks::embed::EmbedConfig;
use epigraph_sinks::lance::LanceConfig;
use epigraph_sinks::neo4j::Neo4jConfig;
use epigraph_sources::caldav::CaldavConfig;
use epigraph_sources::docs::DocsConfig;
use epigraph_sources::ics::IcsConfig;
use epigraph_sources::imap::ImapConfig;
use epigraph_sources::kafka::KafkaConfig;
use epigraph_sources::mail::MailConfig;
use epigraph_sources::slack::SlackConfig;
use epigraph_sources::topic::TopicSource;
use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Serialize};

/// The whole configuration of the `epigraph` binary.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EpigraphConfig {
    /// Kafka connection and topics.
    pub kafka: KafkaConfig,
    /// Neo4j connection.
    pub neo4j: Neo4jConfig,
    /// LanceDB location.
    pub lancedb: LanceConfig,
    /// Embedding model.
    pub model: EmbedConfig,
    /// Documents source.
    pub docs: DocsConfig,
    /// Slack export source.
    pub slack: SlackConfig,
    /// E-mail sources (mbox, .eml, maildir).
    pub mail: MailConfig,
    /// Calendar source (.ics).
    pub ics: IcsConfig,
    /// Calendar server source (CalDAV); calendars are read with the `[ics]` settings.
    pub caldav: CaldavConfig,
    /// Mail server source (IMAP); messages are read with the `[mail]` settings.
    pub imap: ImapConfig,
    /// Sources declared in the configuration: `[[sources.topic]]`.
    pub sources: SourcesConfig,
    /// `epigraph run`.
    pub run: RunConfig,
    /// The ontology: kinds, relations, epistemic types, edges, authority.
    pub ontology: OntologyConfig,
    /// `epigraph serve`.
    pub serve: ServeConfig,
    /// Governed writes: the review windows of proposals.
    pub governance: crate::governance::GovernanceConfig,
    /// The optional model extractor (`epigraph llm propose`): off unless `base_url` is set.
    pub llm: crate::llm::LlmConfig,
    /// Local state of the connectors (manifests of published files). Default
    /// `$EPIGRAPH_HOME/state`.
    pub state_dir: Option<PathBuf>,
}

/// Sources declared in the configuration rather than named on the command line.
///
/// ```toml
/// [[sources.topic]]
/// name = "crm-notes"
/// topic = "crm.public.notes"
/// tenant = "acme"
/// kind = "document"
/// envelope = "debezium"
/// source_id = "/id"
/// body = "/text"
/// ```
///
/// See [`TopicSource`] for every key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SourcesConfig {
    /// Topics produced by other systems (Kafka Connect, Debezium), followed with
    /// `epigraph ingest topic <name>`.
    pub topic: Vec<TopicSource>,
    /// How often a follower (`ingest caldav|imap|topic`) reports its status on
    /// `<prefix>.connectors` while nothing changes (it also reports after every sync). The
    /// health page calls a connector silent after three intervals without a word. Default
    /// 30000 (30 s).
    pub report_every_ms: u64,
}

impl Default for SourcesConfig {
    fn default() -> Self {
        SourcesConfig {
            topic: Vec::new(),
            report_every_ms: 30_000,
        }
    }
}

impl SourcesConfig {
    /// [`SourcesConfig::report_every_ms`] as a duration (at least 100 ms).
    pub fn report_every(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.report_every_ms.max(100))
    }
}

/// Where the ontology comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OntologyConfig {
    /// A folder of `*.toml` files replacing the bundled ontology (`ontology/` of the project).
    /// Default: the bundled one.
    pub dir: Option<PathBuf>,
    /// Folders whose `*.toml` files are loaded on top: new kinds and relations extend the
    /// vocabulary, ones with an existing name replace it.
    pub extra: Vec<PathBuf>,
}

impl OntologyConfig {
    /// A fingerprint of what [`OntologyConfig::load`] and [`OntologyConfig::priority`] read:
    /// the binary's version and the contents of every file of `dir` and `extra`. Processes of
    /// one cluster must agree on it.
    pub fn fingerprint(&self) -> std::io::Result<u64> {
        use sha2::{Digest, Sha256};
        let mut hash = Sha256::new();
        hash.update(env!("CARGO_PKG_VERSION"));
        for dir in self.dir.iter().chain(&self.extra) {
            let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
                .map(|entry| entry.map(|entry| entry.path()))
                .collect::<Result<_, _>>()?;
            files.retain(|file| file.extension().is_some_and(|ext| ext == "toml"));
            files.sort();
            for file in files {
                let text = std::fs::read(&file)?;
                hash.update(file.file_name().map(|n| n.len()).unwrap_or(0).to_le_bytes());
                hash.update(file.file_name().unwrap_or_default().as_encoded_bytes());
                hash.update(text.len().to_le_bytes());
                hash.update(&text);
            }
        }
        let digest = hash.finalize();
        Ok(u64::from_le_bytes(digest[..8].try_into().expect("8 bytes")))
    }

    /// Loads and validates the ontology: the `*.toml` files of `dir` (sorted by name) instead
    /// of the bundled ones when `dir` is given, then every `*.toml` file of each `extra` folder
    /// on top. The files are read here; the operators only parse their text.
    pub fn load(&self) -> Result<epigraph_operators::Ontology, epigraph_operators::OntologyError> {
        let mut sources = match &self.dir {
            Some(dir) => toml_files(dir)?,
            None => epigraph_operators::Ontology::bundled_sources(),
        };
        for folder in &self.extra {
            sources.extend(toml_files(folder)?);
        }
        epigraph_operators::Ontology::from_sources(sources)
    }

    /// The priority constants: `<dir>/priority.toml` when the ontology comes from a folder
    /// that has one, else the bundled file; checked against Appendix D's contraction bound.
    pub fn priority(
        &self,
        ontology: &epigraph_operators::Ontology,
    ) -> Result<
        epigraph_operators::priority::PriorityConfig,
        epigraph_operators::priority::PriorityConfigError,
    > {
        use epigraph_operators::priority::{PriorityConfig, PriorityConfigError};
        let file = self
            .dir
            .as_ref()
            .map(|dir| dir.join("priority.toml"))
            .filter(|file| file.is_file());
        match file {
            None => PriorityConfig::bundled_over(ontology),
            Some(path) => {
                let text =
                    std::fs::read_to_string(&path).map_err(|source| PriorityConfigError::Read {
                        path: path.clone(),
                        source,
                    })?;
                PriorityConfig::from_toml(&text, &path, ontology)
            }
        }
    }
}

/// The `*.toml` files of a folder, sorted by name, as `(path, text)` pairs.
fn toml_files(dir: &Path) -> Result<Vec<(PathBuf, String)>, epigraph_operators::OntologyError> {
    use epigraph_operators::OntologyError;
    let read_err = |source| OntologyError::Read {
        path: dir.to_path_buf(),
        source,
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(read_err)?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            std::fs::read_to_string(&path)
                .map(|text| (path.clone(), text))
                .map_err(|source| OntologyError::Read { path, source })
        })
        .collect()
}

/// How `epigraph run` seals epochs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// Timely worker threads. Default 1.
    pub workers: usize,
    /// An epoch is sealed after this many events. Default 5000.
    pub epoch_max_events: usize,
    /// … or after this many milliseconds since its first event. Default 500.
    pub epoch_max_ms: u64,
    /// Poll timeout in milliseconds; `--until-idle` exits after one idle poll with every
    /// partition read to its end. Default 1000.
    pub idle_ms: u64,
    /// The priorities' clock ("now") advances in steps of this many milliseconds of wall time:
    /// each step recomputes every K (urgency grows, unused nodes decay). Default one day.
    pub clock_step_ms: u64,
    /// A fixed "now" for the priorities, in milliseconds since the Unix epoch, instead of the
    /// wall clock: runs whose K is compared with each other (the outage trials compare a run
    /// with the `rebuild` after it) set it, so that a midnight UTC between them changes
    /// nothing. Default none: the wall clock, in `clock_step_ms` steps.
    pub clock_at_ms: Option<i64>,
    /// Where `GET /metrics` (Prometheus text format) listens; empty turns it off. Default
    /// `127.0.0.1:9464`.
    pub metrics_listen: String,
    /// Spreading the dataflow's workers over several processes (off by default).
    pub cluster: ClusterConfig,
    /// First delay in milliseconds before retrying a store or Kafka operation that failed
    /// because the service is unreachable; doubled after each failure. Default 250.
    pub retry_min_ms: u64,
    /// The longest delay between two retries, in milliseconds. Default 5000.
    pub retry_max_ms: u64,
    /// How long an outage is ridden out before the run gives up (and stops with the error,
    /// nothing committed), in seconds; 0 gives up at once, as before retries existed.
    /// Default 900.
    pub outage_max_secs: u64,
}

/// Multi-process timely: the dataflow's workers run in several processes (`run.workers` threads
/// in each). Process 0 is the driver: it reads Kafka, feeds the dataflow and writes the sinks;
/// every other process is a compute peer started with the same configuration and
/// `epigraph run --process N`. The arrangements are spread over all workers by key, so the
/// memory and CPU of the dataflow grow with the processes. See docs/runtime.md.
///
/// ```toml
/// [run.cluster]
/// addresses = ["10.0.0.1:2101", "10.0.0.2:2101"]
/// process = 0
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClusterConfig {
    /// `host:port` of every process, the same list in the same order in every process. Empty
    /// (the default): the workers are threads of this process only.
    pub addresses: Vec<String>,
    /// This process's index in `addresses` (overridden by `epigraph run --process`).
    pub process: usize,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            workers: 1,
            epoch_max_events: 5000,
            epoch_max_ms: 500,
            idle_ms: 1000,
            clock_step_ms: 86_400_000,
            clock_at_ms: None,
            metrics_listen: "127.0.0.1:9464".into(),
            cluster: ClusterConfig::default(),
            retry_min_ms: 250,
            retry_max_ms: 5000,
            outage_max_secs: 900,
        }
    }
}

/// `[serve.tls]`: serve HTTPS directly (`epigraph::serve::tls`). Both files empty (the default) serves plain HTTP.
///
/// ```toml
/// [serve.tls]
/// cert_file = "/etc/epigraph/tls/fullchain.pem"   # the server certificate, then its chain
/// key_file = "/etc/epigraph/tls/privkey.pem"      # PKCS#8, PKCS#1 (RSA) or SEC1 (EC), PEM
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TlsConfig {
    /// PEM file with the server certificate first, then the intermediate certificates.
    pub cert_file: String,
    /// PEM file with the certificate's private key.
    pub key_file: String,
}

impl TlsConfig {
    /// Whether HTTPS is configured; one file without the other is an error.
    ///
    /// ```
    /// use epigraph::config::TlsConfig;
    /// assert!(!TlsConfig::default().enabled().unwrap());
    /// let half = TlsConfig { cert_file: "cert.pem".into(), key_file: String::new() };
    /// assert!(half.enabled().unwrap_err().to_string().contains("serve.tls.key_file"));
    /// ```
    pub fn enabled(&self) -> anyhow::Result<bool> {
        match (self.cert_file.is_empty(), self.key_file.is_empty()) {
            (true, true) => Ok(false),
            (false, false) => Ok(true),
            (false, true) => {
                anyhow::bail!("serve.tls.cert_file is set but serve.tls.key_file is not")
            }
            (true, false) => {
                anyhow::bail!("serve.tls.key_file is set but serve.tls.cert_file is not")
            }
        }
    }
}

/// How `epigraph serve` listens, authenticates and ranks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServeConfig {
    /// Listen address. Default `127.0.0.1:8080`.
    pub listen: String,
    /// HTTPS: a certificate chain and its key (PEM). Unset (the default), the service speaks
    /// plain HTTP: on loopback, or behind a proxy that terminates TLS (docs/query.md, "TLS").
    pub tls: TlsConfig,
    /// Tenant used when a request names none. Default `default`.
    pub default_tenant: String,
    /// Largest `k` a search may ask for. Default 100.
    pub max_k: usize,
    /// Tokens accepted by the webhook `POST /v1/ingest`, each bound to the tenant its events
    /// belong to. Empty (the default) disables the webhook. Example:
    /// `[[serve.ingest_tokens]]` `token = "…"` `tenant = "acme"`.
    pub ingest_tokens: Vec<IngestToken>,
    /// Largest webhook request body in bytes. Default 2 MiB.
    pub max_body_bytes: usize,
    /// Report every search result as a retrieval on the feedback topic (the usage term of the
    /// priorities). Default true.
    pub report_usage: bool,
    /// Bearer tokens of the query API (`/v1/*` reads and `/mcp`), each bound to a tenant.
    /// Without any, the service refuses to listen beyond loopback and a `tenant` query
    /// parameter selects the tenant (development). Example: `[[serve.tokens]]`
    /// `token = "…"` `tenant = "acme"`.
    pub tokens: Vec<IngestToken>,
    /// Host names (or `host:port`) the MCP endpoint accepts besides loopback (DNS-rebinding
    /// protection).
    pub allowed_hosts: Vec<String>,
    /// Longest query text, in characters. Default 2,000.
    pub max_query_chars: usize,
    /// Largest `budget_tokens` of `/v1/context`. Default 32,000.
    pub max_budget_tokens: usize,
    /// Requests served at once; more wait. Default 64.
    pub max_concurrent_requests: usize,
    /// Requests waiting for a turn at most; beyond, a request is refused at once with `503`
    /// and `Retry-After` (probes and `/metrics` are never held). The wait counts against
    /// `request_timeout_ms`. Default 64.
    pub max_waiting_requests: usize,
    /// A request taking longer is answered `408`. Default 30 s.
    pub request_timeout_ms: u64,
    /// How often Neo4j and LanceDB are probed, in ms; while one is unreachable the query
    /// routes answer `503` with the reason at once. Default 1000.
    pub store_probe_ms: u64,
    /// A probe not answered within this many ms marks its store unreachable. Default 3000.
    pub store_probe_timeout_ms: u64,
    /// How often a live dashboard feed (`/v1/dashboard/stream`) reads the graph at the latest,
    /// in ms: it reads at once when the pipeline announces a change of its tenant (the changes
    /// topic), so this is the safety net for when notices cannot be read. One read serves every
    /// viewer of the same view. Default 15,000 (at least 100).
    pub live_poll_ms: u64,
    /// The graph-state modulation of search scores (OIDA Eq. 2).
    pub rank: epigraph_query::rank::RankConfig,
    /// Section budgets of `/v1/context`.
    pub context: epigraph_query::context::ContextConfig,
    /// Where `epigraph run` exports its metrics, read for the workspace's health page through
    /// `GET /metrics/pipeline`: a URL such as `http://10.0.0.5:9464/metrics`. Default empty:
    /// `http://<run.metrics_listen>/metrics`, the pipeline on this machine. `off` turns the
    /// proxy off.
    pub pipeline_metrics: String,
}

/// A token and the tenant it acts for (`[[serve.tokens]]` for the API, `[[serve.ingest_tokens]]`
/// for the webhook). Its `Debug` never shows the token.
///
/// ```
/// use epigraph::config::IngestToken;
/// let token = IngestToken { token: "s3cret".into(), tenant: "acme".into(), name: None,
///     role: Default::default() };
/// let shown = format!("{token:?}");
/// assert!(shown.contains("acme") && shown.contains("<redacted>") && !shown.contains("s3cret"));
/// ```
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IngestToken {
    /// The bearer token (send `Authorization: Bearer <token>`).
    pub token: String,
    /// The tenant.
    pub tenant: String,
    /// A name for who holds it, recorded on what they propose, review and approve (default
    /// `token-<n>`, its place in the list). Never the token itself.
    #[serde(default)]
    pub name: Option<String>,
    /// What it may do (API tokens): `reader` (read only), `agent` (read and propose; its
    /// proposals fall under the agents' review window) or `reviewer` (read, propose as a
    /// person, review judgements, approve and reject proposals). Default `reviewer`.
    #[serde(default)]
    pub role: TokenRole,
}

/// What a token may do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenRole {
    /// Read only.
    Reader,
    /// Read and propose (as an agent).
    Agent,
    /// Read, propose (as a person), review judgements, approve and reject proposals.
    #[default]
    Reviewer,
}

impl TokenRole {
    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            TokenRole::Reader => "reader",
            TokenRole::Agent => "agent",
            TokenRole::Reviewer => "reviewer",
        }
    }
}

impl std::fmt::Debug for IngestToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IngestToken")
            .field("token", &"<redacted>")
            .field("tenant", &self.tenant)
            .field("name", &self.name)
            .field("role", &self.role)
            .finish()
    }
}

impl ServeConfig {
    /// The query core's share of the configuration: limits, ranking and context budgets.
    pub fn query_config(&self) -> epigraph_query::QueryConfig {
        epigraph_query::QueryConfig {
            max_k: self.max_k,
            max_query_chars: self.max_query_chars,
            max_budget_tokens: self.max_budget_tokens,
            rank: self.rank.clone(),
            context: self.context.clone(),
        }
    }
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            listen: "127.0.0.1:8080".into(),
            tls: Default::default(),
            default_tenant: "default".into(),
            max_k: 100,
            ingest_tokens: Vec::new(),
            max_body_bytes: 2 * 1024 * 1024,
            report_usage: true,
            tokens: Vec::new(),
            allowed_hosts: Vec::new(),
            max_query_chars: 2000,
            max_budget_tokens: 32_000,
            max_concurrent_requests: 64,
            max_waiting_requests: 64,
            request_timeout_ms: 30_000,
            store_probe_ms: 1000,
            store_probe_timeout_ms: 3000,
            live_poll_ms: 15_000,
            rank: Default::default(),
            context: Default::default(),
            pipeline_metrics: String::new(),
        }
    }
}

impl EpigraphConfig {
    /// Load defaults, then `path` (or `./epigraph.toml` when it exists), then the environment.
    pub fn load(path: Option<&Path>) -> Result<Self, Box<figment::Error>> {
        let mut figment = Figment::from(Serialized::defaults(EpigraphConfig::default()));
        match path {
            Some(path) => figment = figment.merge(Toml::file_exact(path)),
            None if Path::new("epigraph.toml").is_file() => {
                figment = figment.merge(Toml::file("epigraph.toml"))
            }
            None => {}
        }
        let env = Env::prefixed("EPIGRAPH_")
            .filter(|key| key.as_str().contains("__") || key == "state_dir")
            .ignore(&[
                "neo4j__password",
                "caldav__password",
                "imap__password",
                "llm__api_key",
                "llm__server_token",
            ])
            .split("__");
        figment = figment.merge(env);
        // The password is taken verbatim: the provider above would read `12345678` as a number
        // (refused, and printed in the error) and `0123` as 123.
        for (var, key) in [
            ("EPIGRAPH_NEO4J__PASSWORD", "neo4j.password"),
            ("EPIGRAPH_CALDAV__PASSWORD", "caldav.password"),
            ("EPIGRAPH_IMAP__PASSWORD", "imap.password"),
            ("EPIGRAPH_LLM__API_KEY", "llm.api_key"),
            ("EPIGRAPH_LLM__SERVER_TOKEN", "llm.server_token"),
        ] {
            if let Some(password) = std::env::var_os(var) {
                let password = password.to_string_lossy().into_owned();
                figment = figment.merge(Serialized::default(key, password));
            }
        }
        figment
            .extract()
            .map_err(|error| Box::new(redact_secrets(error)))
    }

    /// The state directory, resolved.
    pub fn state_dir(&self) -> PathBuf {
        self.state_dir
            .clone()
            .unwrap_or_else(|| epigraph_sinks::embed::default_home().join("state"))
    }
}

/// Keys whose values are secrets: never shown in an error.
const SECRET_KEYS: [&str; 6] = [
    "password",
    "token",
    "tokens",
    "ingest_tokens",
    "api_key",
    "server_token",
];

/// The configuration errors with the values of secret keys left out: figment's messages quote
/// the value they refused (`found string "…", expected a sequence`), which for a password or a
/// token would print the secret.
fn redact_secrets(error: figment::Error) -> figment::Error {
    let redacted = error.into_iter().map(|mut error| {
        let secret = error
            .path
            .iter()
            .any(|part| SECRET_KEYS.contains(&part.to_ascii_lowercase().as_str()));
        if secret {
            let expected = match &error.kind {
                figment::error::Kind::InvalidType(_, expected)
                | figment::error::Kind::InvalidValue(_, expected) => {
                    format!(", expected {expected}")
                }
                _ => String::new(),
            };
            error.kind = figment::error::Kind::Message(format!(
                "invalid value (not shown: it is a secret){expected}"
            ));
        }
        error
    });
    redacted
        .reduce(|all, next| all.chain(next))
        .unwrap_or_else(|| figment::Error::from("invalid configuration".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_never_shown_in_debug_or_in_configuration_errors() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = EpigraphConfig::default();
        config.neo4j.password = "pw-hunter2".into();
        config.serve.tokens.push(IngestToken {
            token: "tok-hunter3".into(),
            tenant: "acme".into(),
            name: None,
            role: Default::default(),
        });
        config.serve.ingest_tokens = config.serve.tokens.clone();
        config.llm.api_key = Some("key-hunter5".into());
        config.llm.server_token = Some("tok-hunter6".into());
        let shown = format!("{config:?} {config:#?}");
        assert!(!shown.contains("hunter"), "{shown}");
        for (text, key) in [
            ("[neo4j]\npassword = 87654321\n", "neo4j.password"),
            ("[serve]\ntokens = \"tok-hunter4\"\n", "serve.tokens"),
            (
                "[[serve.ingest_tokens]]\ntoken = 5551234\ntenant = \"t\"\n",
                "serve.ingest_tokens",
            ),
            ("[llm]\napi_key = 87654321\n", "llm.api_key"),
        ] {
            let path = dir.path().join("epigraph.toml");
            std::fs::write(&path, text).unwrap();
            let error = EpigraphConfig::load(Some(&path)).unwrap_err().to_string();
            assert!(
                error.contains(key) && error.contains("not shown"),
                "{error}"
            );
            for secret in ["87654321", "hunter4", "5551234"] {
                assert!(!error.contains(secret), "{error}");
            }
        }
        // Another key's refused value is still quoted, to help.
        std::fs::write(
            dir.path().join("epigraph.toml"),
            "[serve]\nmax_k = \"many\"\n",
        )
        .unwrap();
        let error = EpigraphConfig::load(Some(&dir.path().join("epigraph.toml")))
            .unwrap_err()
            .to_string();
        assert!(error.contains("many"), "{error}");
    }

    #[test]
    fn a_priority_file_overrides_the_bundled_config_and_an_ontology_folder_is_read() {
        use epigraph_operators::Ontology;
        use epigraph_operators::priority::{Fixed, PriorityConfig};
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in Ontology::bundled_sources() {
            std::fs::write(dir.path().join(path.file_name().unwrap()), text).unwrap();
        }
        let bundled = std::fs::read_to_string(
            epigraph_schemas::manifest_dir!().join("../ontology/priority.toml"),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("priority.toml"),
            bundled.replace("eta = 0.1", "eta = 0.2"),
        )
        .unwrap();
        let config = OntologyConfig {
            dir: Some(dir.path().to_path_buf()),
            ..OntologyConfig::default()
        };
        let ontology = config.load().unwrap();
        assert_eq!(config.priority(&ontology).unwrap().eta, Fixed(200_000));
        assert_eq!(
            OntologyConfig::default().priority(&ontology).unwrap(),
            PriorityConfig::bundled()
        );
        let missing = OntologyConfig {
            dir: Some(dir.path().join("absent")),
            ..OntologyConfig::default()
        };
        assert!(matches!(
            missing.load(),
            Err(epigraph_operators::OntologyError::Read { .. })
        ));
    }

    #[test]
    fn the_example_config_deserializes() {
        let path = epigraph_schemas::manifest_dir!().join("../deploy/epigraph.example.toml");
        let config = EpigraphConfig::load(Some(&path)).expect("example config loads");
        assert_eq!(config.kafka.bootstrap, "127.0.0.1:9092");
        assert_eq!(config.run.workers, 2);
    }

    #[test]
    fn unknown_keys_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, "[kafka]\nbootstrapp = 'x'\n").unwrap();
        let error = EpigraphConfig::load(Some(&path)).unwrap_err().to_string();
        assert!(error.contains("bootstrapp"), "{error}");
    }
}
