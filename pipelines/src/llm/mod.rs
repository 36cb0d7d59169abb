//! The optional model extractor: a second opinion on memory objects from an OpenAI-compatible
//! chat-completions endpoint, turned into proposals (never direct writes). The deterministic
//! extractor stays the default; nothing here runs unless `[llm]` names an endpoint and
//! `epigraph llm propose` (or `epigraph llm eval`) is run. See docs/llm.md.
//!
//! - [`config`]: the `[llm]` section.
//! - [`schema`]: the answer's JSON schema and its description, generated from the ontology.
//! - [`client`]: one chat-completions call.
//! - [`validate`]: JSON, schema, names and signatures; a refusal carries its reason.
//! - [`cache`]: answers on disk by (content hash, model, prompt version).
//! - [`metrics`]: Prometheus metrics (calls, rejections, tokens, cost, latency, proposals).
//!
//! One extraction ([`LlmExtractor::extract`]): the cache answers if it can; otherwise the model
//! is called, its answer validated, and a refused answer is sent back with the reason, at most
//! `max_retries` times; if every try is refused the rules' result stands (no proposal; the
//! refusals are counted and logged). The outcome is cached unless a call failed (a down
//! endpoint is not an answer).

pub mod cache;
pub mod client;
pub mod config;
pub mod metrics;
pub mod schema;
pub mod validate;

use std::sync::Arc;
use std::time::Duration;

pub use config::{LlmConfig, UnitSelection};

use cache::{Cache, CacheError, Outcome};
use client::{CallError, ChatClient, Message};
use metrics::LlmMetrics;
use schema::Vocabulary;
use validate::{Shown, salvage};

/// Why the extractor could not run.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// `[llm] base_url` is empty.
    #[error("[llm] base_url is not set: the model extractor is off")]
    Disabled,
    /// The endpoint could not be called at all (every try failed).
    #[error(transparent)]
    Call(#[from] CallError),
    /// The cache could not be written.
    #[error(transparent)]
    Cache(#[from] CacheError),
}

/// What the model is shown about one unit.
#[derive(Clone, Debug, Default)]
pub struct UnitPrompt {
    /// The unit's text.
    pub text: String,
    /// Its source's kind (`document`, `chat`, …).
    pub source_kind: String,
    /// Its source's title.
    pub title: Option<String>,
    /// Its section heading.
    pub section: Option<String>,
    /// Other memory objects of the same source: (shown id `m1`…, type, text).
    pub neighbours: Vec<(String, String, String)>,
    /// Known entities of the tenant to reuse: (name, kind).
    pub entities: Vec<(String, String)>,
}

/// The most characters of a unit's text sent (the local model has a 2,048-token context).
const MAX_UNIT_CHARS: usize = 1200;
/// The most characters of a neighbour's text sent.
const MAX_NEIGHBOUR_CHARS: usize = 200;

fn clip(text: &str, max: usize) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() <= max {
        text
    } else {
        text.chars().take(max).collect::<String>() + "…"
    }
}

impl UnitPrompt {
    /// The user message.
    ///
    /// ```
    /// use epigraph::llm::UnitPrompt;
    /// let prompt = UnitPrompt { text: "We chose Postgres.".into(), source_kind: "chat".into(),
    ///     neighbours: vec![("m1".into(), "QUESTION".into(), "Which database?".into())],
    ///     entities: vec![("Postgres".into(), "Product".into())], ..UnitPrompt::default() };
    /// let text = prompt.message();
    /// assert!(text.contains("m1 [QUESTION]: Which database?") && text.contains("Postgres (Product)"));
    /// assert!(text.ends_with("We chose Postgres."));
    /// ```
    pub fn message(&self) -> String {
        let mut text = String::new();
        if !self.entities.is_empty() {
            let names: Vec<String> = self
                .entities
                .iter()
                .map(|(n, k)| format!("{n} ({k})"))
                .collect();
            text.push_str(&format!(
                "Known entities (reuse these names): {}.\n",
                names.join(", ")
            ));
        }
        if !self.neighbours.is_empty() {
            text.push_str("Other memory objects of the same source:\n");
            for (id, memory_type, body) in &self.neighbours {
                text.push_str(&format!(
                    "{id} [{memory_type}]: {}\n",
                    clip(body, MAX_NEIGHBOUR_CHARS)
                ));
            }
        }
        text.push_str(&format!("The unit, from a {}", self.source_kind));
        if let Some(title) = &self.title {
            text.push_str(&format!(" titled {title:?}"));
        }
        if let Some(section) = &self.section {
            text.push_str(&format!(", section {section:?}"));
        }
        text.push_str(":\n");
        text.push_str(&clip(&self.text, MAX_UNIT_CHARS));
        text
    }

    /// What an answer may point to and reuse.
    fn shown(&self) -> Shown {
        Shown {
            entities: self
                .entities
                .iter()
                .map(|(n, k)| (n.trim().to_lowercase(), k.clone()))
                .collect(),
            targets: self.neighbours.iter().map(|(id, ..)| id.clone()).collect(),
        }
    }
}

/// The result of one extraction.
#[derive(Clone, Debug)]
pub struct Extraction {
    /// The cache key.
    pub key: String,
    /// What happened.
    pub outcome: Outcome,
    /// Served from the cache.
    pub cached: bool,
}

/// The model extractor: endpoint, vocabulary, cache and metrics.
#[derive(Debug, Clone)]
pub struct LlmExtractor {
    config: LlmConfig,
    client: ChatClient,
    cache: Cache,
    vocabulary: Vocabulary,
    schema: serde_json::Value,
    system: String,
    metrics: Arc<LlmMetrics>,
}

impl LlmExtractor {
    /// An extractor for `[llm]` over `ontology`.
    pub fn new(
        config: &LlmConfig,
        ontology: &epigraph_operators::Ontology,
        metrics: Arc<LlmMetrics>,
    ) -> Result<Self, LlmError> {
        if !config.enabled() {
            return Err(LlmError::Disabled);
        }
        let vocabulary = Vocabulary::of(ontology);
        let schema = vocabulary.json_schema();
        let system = format!(
            "You read one unit of an organisation's memory (a sentence or list item) and say what \
             kind of memory object it is, which entities it names, how they relate, and how it \
             relates to the other memory objects shown.\n{}",
            vocabulary.describe()
        );
        Ok(LlmExtractor {
            client: ChatClient::new(config)?,
            cache: Cache::open(&config.cache_dir())?,
            config: config.clone(),
            vocabulary,
            schema,
            system,
            metrics,
        })
    }

    /// `[llm]`.
    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    /// The answer's JSON schema sent with each call.
    pub fn schema(&self) -> &serde_json::Value {
        &self.schema
    }

    /// The model's name.
    pub fn model(&self) -> &str {
        &self.config.model
    }

    /// The price of tokens at the configured rates.
    pub fn cost(&self, prompt_tokens: u64, completion_tokens: u64) -> f64 {
        self.config.cost(prompt_tokens, completion_tokens)
    }

    /// The metrics.
    pub fn metrics(&self) -> &Arc<LlmMetrics> {
        &self.metrics
    }

    /// Extract one unit: from the cache, or by calling the model (with bounded retries).
    pub async fn extract(&self, unit: &UnitPrompt) -> Result<Extraction, LlmError> {
        let mut messages = vec![
            Message::new("system", self.system.clone()),
            Message::new("user", unit.message()),
        ];
        let key = cache::key(
            &self.config.model,
            self.config.max_tokens,
            &messages,
            &self.schema,
        );
        if let Some(outcome) = self.cache.get(&key) {
            self.metrics.cache_hit();
            return Ok(Extraction {
                key,
                outcome,
                cached: true,
            });
        }
        let shown = unit.shown();
        let mut outcome = Outcome {
            answer: None,
            rejections: Vec::new(),
            rejection_codes: Vec::new(),
            dropped: Vec::new(),
            calls: 0,
            prompt_tokens: 0,
            completion_tokens: 0,
            latency_ms: 0,
        };
        let mut failure: Option<CallError> = None;
        let tries = self.config.retries() + 1;
        for try_number in 1..=tries {
            let reply = match self.client.complete(&messages, &self.schema).await {
                Ok(reply) => reply,
                Err(error) => {
                    tracing::warn!(%error, "calling the model");
                    self.metrics.call("error", 0, 0, Duration::ZERO, 0.0);
                    failure = Some(error);
                    continue;
                }
            };
            outcome.calls += 1;
            outcome.prompt_tokens += reply.prompt_tokens;
            outcome.completion_tokens += reply.completion_tokens;
            outcome.latency_ms += reply.latency.as_millis() as u64;
            let cost = self.cost(reply.prompt_tokens, reply.completion_tokens);
            // One check: what is wrong, if anything, and what would be left without the faulty
            // relations and edges. The last try keeps that rest (its type and entities stand,
            // the rest is dropped with the reasons); earlier tries are refused with the first
            // fault, which the model is told.
            let checked = salvage(&reply.content, &self.vocabulary, &shown).and_then(
                |(answer, mut dropped)| {
                    if dropped.is_empty() || try_number == tries {
                        Ok((answer, dropped))
                    } else {
                        Err(dropped.remove(0))
                    }
                },
            );
            match checked {
                Ok((answer, dropped)) => {
                    let label = if dropped.is_empty() {
                        "accepted"
                    } else {
                        "salvaged"
                    };
                    self.metrics.call(
                        label,
                        reply.prompt_tokens,
                        reply.completion_tokens,
                        reply.latency,
                        cost,
                    );
                    if !dropped.is_empty() {
                        outcome.dropped = dropped.iter().map(ToString::to_string).collect();
                        tracing::info!(
                            dropped = ?outcome.dropped,
                            "the last answer was kept without its faulty relations and edges"
                        );
                    }
                    outcome.answer = Some(answer);
                    break;
                }
                Err(rejection) => {
                    self.metrics.call(
                        "rejected",
                        reply.prompt_tokens,
                        reply.completion_tokens,
                        reply.latency,
                        cost,
                    );
                    self.metrics.rejection(rejection.code());
                    tracing::info!(reason = %rejection, "the model's answer was refused");
                    outcome.rejections.push(rejection.to_string());
                    outcome.rejection_codes.push(rejection.code().to_string());
                    messages.push(Message::new("assistant", reply.content));
                    messages.push(Message::new(
                        "user",
                        format!(
                            "That answer was refused: {rejection}. Answer again with one JSON \
                             object that fits the schema and the vocabulary."
                        ),
                    ));
                }
            }
        }
        match failure {
            Some(error) if outcome.calls == 0 => return Err(error.into()),
            Some(_) => {}
            None => self.cache.put(&key, &outcome)?,
        }
        if outcome.answer.is_none() {
            self.metrics.fallback();
            tracing::warn!(
                tries = outcome.calls,
                reasons = ?outcome.rejections,
                "every answer was refused: the rules' result stands"
            );
        }
        Ok(Extraction {
            key,
            outcome,
            cached: false,
        })
    }
}
