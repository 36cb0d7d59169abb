//! The context block of a request (`POST /v1/context`, MCP `get_context`): the ranked memory
//! objects, the entities they mention and the best source passages, cut to a token budget by
//! [`context::build`].

use epigraph_sinks::lance::SearchMode;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::context::{self, ContextBlock, ContextInput};
use crate::graph::MemoryCard;
use crate::retrieve::SearchQuery;
use crate::search::{as_of, parse_types};
use crate::{QueryError, QueryService};

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
        let top: Vec<MemoryCard> = ranked
            .iter()
            .take(query.k)
            .map(|r| r.card.clone())
            .collect();
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
