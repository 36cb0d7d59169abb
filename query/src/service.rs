//! The query service's core: the stores it reads, its limits, and where it reports what it
//! returned. Transports (HTTP in `epigraph::serve`, MCP) hold one and call its methods.

use std::sync::Arc;

use epigraph_sinks::lance::LanceSink;
use serde::{Deserialize, Serialize};

use crate::context::ContextConfig;
use crate::graph::GraphReader;
use crate::rank::RankConfig;

/// Limits and ranking of the query core (read from `[serve]` of `epigraph.toml`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueryConfig {
    /// Largest `k` a search may ask for. Default 100.
    pub max_k: usize,
    /// Longest query text, in characters. Default 2,000.
    pub max_query_chars: usize,
    /// Largest `budget_tokens` of a context block. Default 32,000.
    pub max_budget_tokens: usize,
    /// The graph-state modulation of search scores (OIDA Eq. 2).
    pub rank: RankConfig,
    /// Section budgets of context blocks.
    pub context: ContextConfig,
}

impl Default for QueryConfig {
    fn default() -> Self {
        QueryConfig {
            max_k: 100,
            max_query_chars: 2_000,
            max_budget_tokens: 32_000,
            rank: RankConfig::default(),
            context: ContextConfig::default(),
        }
    }
}

/// Where returned memory objects are reported as retrievals (the usage term of the
/// priorities reads them back from the feedback topic).
pub trait UsageSink: Send + Sync + std::fmt::Debug {
    /// `ids` were returned to a reader of `tenant`; must not block.
    fn retrieved(&self, tenant: &str, ids: Vec<String>);
}

/// K as it was: the samples of each memory object's priority over time (the query service
/// keeps them from the priorities topic), read for rankings `as_of` an instant.
pub trait PriorityHistoryRead: Send + Sync + std::fmt::Debug {
    /// K of `node` as last recorded at or before `at` (ms since the Unix epoch), if the
    /// history reaches back that far.
    fn k_at(&self, tenant: &str, node: &str, at: i64) -> Option<KThen>;
}

/// A node's K as recorded at an instant, with its value before the clamps when the sample
/// has it (samples of before session 56 do not).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KThen {
    /// K* in [0, 1].
    pub k: f64,
    /// K* before the clamps of K and h ([`crate::graph::PriorityTerms::unclamped`]).
    pub unclamped: Option<f64>,
}

/// The stores and limits every query is answered from.
#[derive(Clone, Debug)]
pub struct QueryService {
    pub(crate) lance: LanceSink,
    pub(crate) graph: GraphReader,
    pub(crate) config: Arc<QueryConfig>,
    usage: Option<Arc<dyn UsageSink>>,
    history: Option<Arc<dyn PriorityHistoryRead>>,
}

impl QueryService {
    /// A service over opened stores; `usage` receives what each answer returned.
    pub fn new(
        lance: LanceSink,
        graph: GraphReader,
        config: QueryConfig,
        usage: Option<Arc<dyn UsageSink>>,
    ) -> Self {
        QueryService {
            lance,
            graph,
            config: Arc::new(config),
            usage,
            history: None,
        }
    }

    /// With K's history, for priorities `as_of` an instant.
    pub fn with_history(mut self, history: Arc<dyn PriorityHistoryRead>) -> Self {
        self.history = Some(history);
        self
    }

    /// K of `node` as recorded at or before `at`, when a history is attached and reaches back.
    pub fn k_at(&self, tenant: &str, node: &str, at: i64) -> Option<KThen> {
        self.history.as_ref()?.k_at(tenant, node, at)
    }

    /// The LanceDB tables read (for health checks and counts).
    pub fn lance(&self) -> &LanceSink {
        &self.lance
    }

    /// The graph read.
    pub fn graph(&self) -> &GraphReader {
        &self.graph
    }

    /// The limits and ranking in force.
    pub fn config(&self) -> &QueryConfig {
        &self.config
    }

    /// Report returned memory objects as retrievals (in the background).
    pub fn report_usage(&self, tenant: &str, ids: Vec<String>) {
        if let Some(usage) = &self.usage
            && !ids.is_empty()
        {
            usage.retrieved(tenant, ids);
        }
    }
}

/// The first `max` characters of `text`, cut at a word boundary, with an ellipsis when cut.
///
/// ```
/// assert_eq!(epigraph_query::snippet("alpha beta gamma", 12), "alpha beta …");
/// assert_eq!(epigraph_query::snippet("short", 12), "short");
/// ```
pub fn snippet(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    let cut = cut
        .rsplit_once(char::is_whitespace)
        .map(|(head, _)| head)
        .unwrap_or(&cut);
    format!("{} …", cut.trim_end())
}
