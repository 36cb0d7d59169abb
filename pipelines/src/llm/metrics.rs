//! Prometheus metrics of the model extractor (`epigraph llm propose --metrics-listen ADDR`):
//! calls by outcome, rejections by reason, cache hits, tokens, cost, call latency, fallbacks to
//! the rules and proposals by kind and outcome. Only calls actually made count: an extraction
//! served from the cache adds a cache hit and nothing else.

use std::sync::atomic::AtomicU64;
use std::time::Duration;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

type Labels = Vec<(String, String)>;

/// The extractor's metrics, labelled with the model.
#[derive(Debug)]
pub struct LlmMetrics {
    registry: Registry,
    model: String,
    calls: Family<Labels, Counter>,
    rejections: Family<Labels, Counter>,
    cache_hits: Family<Labels, Counter>,
    fallbacks: Family<Labels, Counter>,
    prompt_tokens: Family<Labels, Counter>,
    completion_tokens: Family<Labels, Counter>,
    cost: Family<Labels, Counter<f64, AtomicU64>>,
    latency: Family<Labels, Histogram>,
    proposals: Family<Labels, Counter>,
}

fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.05, 2.0, 14))
}

impl LlmMetrics {
    /// Metrics of the extractor calling `model`.
    ///
    /// ```
    /// use epigraph::llm::metrics::LlmMetrics;
    /// let metrics = LlmMetrics::new("tiny");
    /// metrics.call("accepted", 100, 20, std::time::Duration::from_millis(300), 0.5);
    /// let text = metrics.render();
    /// assert!(text.contains(r#"epigraph_llm_calls_total{model="tiny",outcome="accepted"} 1"#), "{text}");
    /// assert!(text.contains(r#"epigraph_llm_prompt_tokens_total{model="tiny"} 100"#), "{text}");
    /// ```
    pub fn new(model: &str) -> Self {
        let mut registry = Registry::with_prefix("epigraph_llm");
        let calls = Family::<Labels, Counter>::default();
        let rejections = Family::<Labels, Counter>::default();
        let cache_hits = Family::<Labels, Counter>::default();
        let fallbacks = Family::<Labels, Counter>::default();
        let prompt_tokens = Family::<Labels, Counter>::default();
        let completion_tokens = Family::<Labels, Counter>::default();
        let cost = Family::<Labels, Counter<f64, AtomicU64>>::default();
        let latency = Family::<Labels, Histogram>::new_with_constructor(
            latency_histogram as fn() -> Histogram,
        );
        let proposals = Family::<Labels, Counter>::default();
        registry.register(
            "calls",
            "Chat-completion calls by outcome (accepted, salvaged, rejected, error)",
            calls.clone(),
        );
        registry.register(
            "rejections",
            "Answers refused, by reason (not_json, schema, unknown_type, signature, …)",
            rejections.clone(),
        );
        registry.register(
            "cache_hits",
            "Extractions served from the cache (no call)",
            cache_hits.clone(),
        );
        registry.register(
            "fallbacks",
            "Extractions whose every try was refused: the rules' result stands",
            fallbacks.clone(),
        );
        registry.register("prompt_tokens", "Prompt tokens sent", prompt_tokens.clone());
        registry.register(
            "completion_tokens",
            "Completion tokens received",
            completion_tokens.clone(),
        );
        registry.register(
            "cost",
            "Price of the calls at [llm]'s per-1k-token rates",
            cost.clone(),
        );
        registry.register(
            "call_duration_seconds",
            "Time of one chat-completion call",
            latency.clone(),
        );
        registry.register(
            "proposals",
            "Proposals by kind (edit, judgement) and outcome (created, duplicate, refused)",
            proposals.clone(),
        );
        LlmMetrics {
            registry,
            model: model.to_string(),
            calls,
            rejections,
            cache_hits,
            fallbacks,
            prompt_tokens,
            completion_tokens,
            cost,
            latency,
            proposals,
        }
    }

    fn labels(&self, extra: &[(&str, &str)]) -> Labels {
        let mut labels = vec![("model".to_string(), self.model.clone())];
        labels.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        labels
    }

    /// A call that returned (`accepted`, `salvaged`: kept without its faulty relations and edges,
    /// or `rejected`) or failed (`error`, no tokens).
    pub fn call(
        &self,
        outcome: &str,
        prompt_tokens: u64,
        completion_tokens: u64,
        latency: Duration,
        cost: f64,
    ) {
        self.calls
            .get_or_create(&self.labels(&[("outcome", outcome)]))
            .inc();
        let l = self.labels(&[]);
        self.prompt_tokens.get_or_create(&l).inc_by(prompt_tokens);
        self.completion_tokens
            .get_or_create(&l)
            .inc_by(completion_tokens);
        self.cost.get_or_create(&l).inc_by(cost);
        self.latency
            .get_or_create(&l)
            .observe(latency.as_secs_f64());
    }

    /// An answer refused for `reason` (a [`super::validate::Rejection::code`]).
    pub fn rejection(&self, reason: &str) {
        self.rejections
            .get_or_create(&self.labels(&[("reason", reason)]))
            .inc();
    }

    /// An extraction served from the cache.
    pub fn cache_hit(&self) {
        self.cache_hits.get_or_create(&self.labels(&[])).inc();
    }

    /// An extraction whose tries were all refused.
    pub fn fallback(&self) {
        self.fallbacks.get_or_create(&self.labels(&[])).inc();
    }

    /// A proposal of `kind` sent, with its `outcome`.
    pub fn proposal(&self, kind: &str, outcome: &str) {
        self.proposals
            .get_or_create(&self.labels(&[("kind", kind), ("outcome", outcome)]))
            .inc();
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut text = String::new();
        encode(&mut text, &self.registry).expect("metrics encode to a string");
        text
    }
}
