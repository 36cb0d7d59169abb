//! The context block of a request (`POST /v1/context`, MCP `get_context`): the ranked memory
//! objects, the entities they mention and the best source passages, cut to a token budget by
//! [`context::build`].

use epigraph_sinks::lance::SearchMode;
use serde::Deserialize;
use utoipa::ToSchema;

use std::collections::{HashMap, HashSet};

use crate::context::{self, ContextBlock, ContextInput};
use crate::expand::{NodeKind, describe};
use crate::graph::MemoryCard;
use crate::retrieve::SearchQuery;
use crate::search::{as_of, fold_restatements, parse_types};
use crate::{QueryError, QueryService};

/// Memory objects the graph walk adds to a block (beyond the ranked ones).
const GRAPH_ITEMS: usize = 6;

/// Body of `POST /v1/context`.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextRequest {
    /// What the agent is working on.
    pub query: String,
    /// Token budget of the block (default `serve.context.default_budget_tokens`).
    pub budget_tokens: Option<usize>,
    /// The state at this instant: ms since the epoch, RFC 3339 or `YYYY-MM-DD`.
    pub as_of: Option<String>,
    /// Only these epistemic types, comma-separated.
    pub types: Option<String>,
}

impl QueryService {
    /// A token-budgeted context block about what the request is working on.
    pub async fn context(
        &self,
        tenant: &str,
        request: &ContextRequest,
    ) -> Result<ContextBlock, QueryError> {
        self.check_query(&request.query)?;
        let budget = request
            .budget_tokens
            .unwrap_or(self.config.context.default_budget_tokens);
        if budget < 50 || budget > self.config.max_budget_tokens {
            return Err(QueryError::invalid(format!(
                "budget_tokens must be between 50 and {}",
                self.config.max_budget_tokens
            )));
        }
        let query = SearchQuery {
            text: request.query.clone(),
            k: 40,
            types: parse_types(request.types.as_deref())?,
            as_of: as_of(request.as_of.as_deref())?,
            include_superseded: true,
            mode: SearchMode::Hybrid,
            candidates: 200,
            modulate: true,
        };
        let (ranked, related) = self.rank(tenant, &query).await?;
        // One memory object per statement: its copies in other sources are named in its note.
        let mut top: Vec<MemoryCard> = fold_restatements(ranked.iter(), |r| &r.card, query.k)
            .map(|r| r.card.clone())
            .collect();
        // What the graph walk reaches from the best of them joins, each with its path (not
        // for an earlier instant: the walk reads today's edges).
        let mut via = HashMap::new();
        if self.config.rank.source_graph_weight > 0.0 && query.as_of.is_none() {
            let walk = self.walk(tenant, &ranked, &query, true).await?;
            let shown: HashSet<&str> = top.iter().map(|c| c.id.as_str()).collect();
            let mut reached: Vec<(&String, f64)> = walk
                .mass
                .iter()
                .filter(|(id, m)| {
                    **m > 0.0
                        && !shown.contains(id.as_str())
                        && walk
                            .hood
                            .nodes
                            .get(*id)
                            .is_some_and(|n| n.kind == NodeKind::Memory)
                })
                .map(|(id, m)| (id, *m))
                .collect();
            reached.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
            let ids: Vec<String> = reached
                .iter()
                .take(GRAPH_ITEMS)
                .map(|(id, _)| (*id).clone())
                .collect();
            let mut cards = self.graph.memory_cards(tenant, &ids).await?;
            for id in ids {
                if let Some(card) = cards.remove(&id) {
                    let path = walk.paths.get(&id).map(|p| describe(p)).unwrap_or_default();
                    if !path.is_empty() {
                        via.insert(id, path);
                    }
                    top.push(card);
                }
            }
        }
        let ids: Vec<String> = top.iter().map(|c| c.id.clone()).collect();
        let entities = self.graph.mentioned_entities(tenant, &ids, 12).await?;
        // Chunks hold the current text only: a block about an earlier instant goes without.
        let passages = if query.as_of.is_none() {
            let chunks = SearchQuery {
                k: 8,
                candidates: 32,
                ..query.clone()
            };
            self.chunk_results(tenant, &chunks, false)
                .await?
                .into_iter()
                .map(|c| context::Passage {
                    id: c.id,
                    source_id: c.source_id,
                    title: c.title,
                    char_start: c.char_start,
                    text: c.text,
                })
                .collect()
        } else {
            Vec::new()
        };
        let input = ContextInput {
            query: request.query.clone(),
            tenant: tenant.to_string(),
            as_of: query.as_of,
            ranked: top,
            related,
            entities,
            passages,
            via,
        };
        let block = context::build(&input, budget, &self.config.context);
        let used: Vec<String> = block
            .sections
            .iter()
            .filter(|s| s.name != "entities" && s.name != "passages")
            .flat_map(|s| s.items.iter().map(|i| i.id.clone()))
            .collect();
        self.report_usage(tenant, used);
        Ok(block)
    }
}
