//! `[llm]`: the optional model extractor (`epigraph llm propose`). Nothing calls a model unless
//! this section names an endpoint and the command is run.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Which units the extractor sends to the model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnitSelection {
    /// Only units the deterministic rules typed with a confidence below `min_confidence`.
    #[default]
    LowConfidence,
    /// Every unit.
    All,
}

/// The model extractor: an OpenAI-compatible chat-completions endpoint, what is sent to it and
/// what it costs. Its answers become proposals (`epigraph serve`'s `POST /v1/proposals`, with an
/// agent token), never direct writes.
///
/// ```toml
/// [llm]
/// base_url = "http://127.0.0.1:8090/v1"   # llama-cpp-python's server, vLLM, OpenAI, …
/// model = "SmolLM2-135M-Instruct"
/// units = "low_confidence"
/// min_confidence = 0.6
/// server = "http://127.0.0.1:8080"        # epigraph serve, where the proposals go
/// # api_key: set EPIGRAPH_LLM__API_KEY; server_token: EPIGRAPH_LLM__SERVER_TOKEN
/// ```
///
/// The key and the token are never logged, printed or put in an error:
///
/// ```
/// use epigraph::llm::LlmConfig;
/// let config = LlmConfig { api_key: Some("sk-hunter2".into()),
///     server_token: Some("tok-hunter3".into()), ..LlmConfig::default() };
/// let shown = format!("{config:?}");
/// assert!(shown.contains("<redacted>") && !shown.contains("hunter"));
/// assert!(!config.enabled(), "no base_url: nothing is called");
/// ```
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LlmConfig {
    /// The OpenAI-compatible API root, e.g. `http://127.0.0.1:8090/v1` (`/chat/completions` is
    /// appended). Empty (the default): the extractor is off.
    pub base_url: String,
    /// The model name sent with each request, recorded on every proposal and part of the cache
    /// key. Default `local`.
    pub model: String,
    /// Bearer key of the endpoint. Default none; prefer `EPIGRAPH_LLM__API_KEY`.
    pub api_key: Option<String>,
    /// Retries after a rejected answer (its reason is fed back) or a failed call; then the
    /// rules' result stands. Default 2, at most 5.
    pub max_retries: u32,
    /// Timeout of one call, in seconds. Default 120.
    pub timeout_secs: u64,
    /// Which units to send: `low_confidence` (the default) or `all`.
    pub units: UnitSelection,
    /// With `units = "low_confidence"`: units the rules typed with a confidence below this
    /// (0–1) are sent. Default 0.6.
    pub min_confidence: f64,
    /// Most tokens the model may answer with. Default 256.
    pub max_tokens: u32,
    /// Price of 1,000 prompt tokens (any currency; the cost figure is in it). Default 0.
    pub cost_per_1k_prompt_tokens: f64,
    /// Price of 1,000 completion tokens. Default 0.
    pub cost_per_1k_completion_tokens: f64,
    /// Where answers are cached, by (content hash, model, prompt version). Default
    /// `$EPIGRAPH_HOME/llm-cache`.
    pub cache_dir: Option<PathBuf>,
    /// Entity names of the tenant given to the model to reuse. Default 20.
    pub max_entities: usize,
    /// Other memory objects of the same source shown with a unit (targets of the edges it may
    /// propose). Default 3.
    pub max_neighbours: usize,
    /// `epigraph serve`'s address, where the proposals are sent. Default
    /// `http://127.0.0.1:8080`.
    pub server: String,
    /// A `role = "agent"` token of `[[serve.tokens]]` (its proposals fall under the agents'
    /// review window). Default none (development mode); prefer `EPIGRAPH_LLM__SERVER_TOKEN`.
    pub server_token: Option<String>,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            base_url: String::new(),
            model: "local".into(),
            api_key: None,
            max_retries: 2,
            timeout_secs: 120,
            units: UnitSelection::LowConfidence,
            min_confidence: 0.6,
            max_tokens: 256,
            cost_per_1k_prompt_tokens: 0.0,
            cost_per_1k_completion_tokens: 0.0,
            cache_dir: None,
            max_entities: 20,
            max_neighbours: 3,
            server: "http://127.0.0.1:8080".into(),
            server_token: None,
        }
    }
}

impl std::fmt::Debug for LlmConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let redacted = |s: &Option<String>| s.as_ref().map(|_| "<redacted>");
        f.debug_struct("LlmConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &redacted(&self.api_key))
            .field("max_retries", &self.max_retries)
            .field("timeout_secs", &self.timeout_secs)
            .field("units", &self.units)
            .field("min_confidence", &self.min_confidence)
            .field("max_tokens", &self.max_tokens)
            .field("cost_per_1k_prompt_tokens", &self.cost_per_1k_prompt_tokens)
            .field(
                "cost_per_1k_completion_tokens",
                &self.cost_per_1k_completion_tokens,
            )
            .field("cache_dir", &self.cache_dir)
            .field("max_entities", &self.max_entities)
            .field("max_neighbours", &self.max_neighbours)
            .field("server", &self.server)
            .field("server_token", &redacted(&self.server_token))
            .finish()
    }
}

/// The most retries `max_retries` may ask for.
pub const MAX_RETRIES: u32 = 5;

impl LlmConfig {
    /// Whether an endpoint is configured.
    pub fn enabled(&self) -> bool {
        !self.base_url.trim().is_empty()
    }

    /// Retries, bounded by [`MAX_RETRIES`].
    ///
    /// ```
    /// use epigraph::llm::LlmConfig;
    /// let config = LlmConfig { max_retries: 99, ..LlmConfig::default() };
    /// assert_eq!(config.retries(), 5);
    /// ```
    pub fn retries(&self) -> u32 {
        self.max_retries.min(MAX_RETRIES)
    }

    /// The timeout of one call.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs.max(1))
    }

    /// The cache folder, resolved.
    pub fn cache_dir(&self) -> PathBuf {
        self.cache_dir
            .clone()
            .unwrap_or_else(|| epigraph_sinks::embed::default_home().join("llm-cache"))
    }

    /// The price of a number of tokens at the configured rates.
    ///
    /// ```
    /// use epigraph::llm::LlmConfig;
    /// let config = LlmConfig { cost_per_1k_prompt_tokens: 0.5,
    ///     cost_per_1k_completion_tokens: 2.0, ..LlmConfig::default() };
    /// assert!((config.cost(2000, 500) - 2.0).abs() < 1e-9);
    /// ```
    pub fn cost(&self, prompt_tokens: u64, completion_tokens: u64) -> f64 {
        (prompt_tokens as f64 * self.cost_per_1k_prompt_tokens
            + completion_tokens as f64 * self.cost_per_1k_completion_tokens)
            / 1000.0
    }

    /// Whether a unit the rules typed with `confidence` (thousandths) is sent.
    ///
    /// ```
    /// use epigraph::llm::{LlmConfig, UnitSelection};
    /// let config = LlmConfig::default();
    /// assert!(config.selects(400) && !config.selects(800));
    /// let all = LlmConfig { units: UnitSelection::All, ..config };
    /// assert!(all.selects(800));
    /// ```
    pub fn selects(&self, confidence: u16) -> bool {
        match self.units {
            UnitSelection::All => true,
            UnitSelection::LowConfidence => f64::from(confidence) / 1000.0 < self.min_confidence,
        }
    }
}
