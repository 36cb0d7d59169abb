//! The graph reads of the query service: nodes, neighbourhoods, entities, contradictions, open
//! questions, priorities, timelines and traversals, each as of an instant where it applies.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use epigraph_schemas::memory::Standing;

use crate::graph::{
    AnsweredQuestion, ContradictionPair, EntityCard, Hop, MemoryCard, NodeView, Subgraph, Validity,
};
use crate::rank::AsOf;
use crate::search::{as_of, parse_types};
use crate::{KThen, QueryError, QueryService};

/// Only the tenant parameter.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct TenantParams {
    /// Tenant (development mode only).
    pub tenant: Option<String>,
}

/// Parameters of the neighbourhood.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct NeighborhoodParams {
    /// Hops, 1–3 (default 1).
    pub hops: Option<u8>,
    /// Most nodes returned besides the centre (default 100).
    pub limit: Option<usize>,
    /// Tenant (development mode only).
    pub tenant: Option<String>,
}

/// Parameters of the entity lookup.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EntityParams {
    /// A name, alias, address or id (case-insensitive).
    pub name: String,
    /// Match the whole name only (default false: substring).
    pub exact: Option<bool>,
    /// Most entities (default 20).
    pub limit: Option<usize>,
    /// Only the relations valid at this instant (ms since the epoch, RFC 3339 or
    /// `YYYY-MM-DD`); without it every relation, those that ended with their `t_invalid`.
    pub as_of: Option<String>,
    /// Tenant (development mode only).
    pub tenant: Option<String>,
}

/// Entities by name, alias or address, reported as their canonical entity.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct EntitiesResponse {
    /// Matches, most mentioned first.
    pub entities: Vec<EntityCard>,
}

/// Parameters of lists.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListParams {
    /// Most items (default 50).
    pub limit: Option<usize>,
    /// The state at this instant: ms since the epoch, RFC 3339 or `YYYY-MM-DD`.
    pub as_of: Option<String>,
    /// Contradictions: also those that ended (one side superseded).
    pub include_resolved: Option<bool>,
    /// Tenant (development mode only).
    pub tenant: Option<String>,
}

/// Contradiction pairs.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct ContradictionsResponse {
    /// Pairs, newest first.
    pub contradictions: Vec<ContradictionPair>,
}

/// Open questions.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct QuestionsResponse {
    /// Open questions, most urgent (highest K) first.
    pub questions: Vec<MemoryCard>,
}

/// Answered questions.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct AnsweredResponse {
    /// Each question with the statement that answered it, the most recently answered first.
    pub answered: Vec<AnsweredQuestion>,
}

/// Parameters of the priority list.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PriorityParams {
    /// How many (default 20).
    pub top: Option<usize>,
    /// Only these epistemic types, comma-separated.
    pub types: Option<String>,
    /// The ranking at this instant (YYYY-MM-DD, RFC 3339 or ms since the epoch): the memory
    /// objects valid then, by the K recorded at that instant where K's history reaches back
    /// (`k_as_of`), by their K now otherwise.
    pub as_of: Option<String>,
    /// Tenant (development mode only).
    pub tenant: Option<String>,
}

/// Memory objects by priority.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct PrioritiesResponse {
    /// Highest K first (with `as_of`: highest K then, see `k_as_of`).
    pub priorities: Vec<MemoryCard>,
    /// The instant asked for (ms since the Unix epoch), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub as_of: Option<i64>,
    /// With `as_of`: K as recorded at that instant, per memory object whose history reaches
    /// back that far. An object without an entry is ranked by its K now.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub k_as_of: BTreeMap<String, f64>,
}

/// Parameters of a timeline.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct TimelineParams {
    /// The subject: an entity's name, alias or id.
    pub subject: String,
    /// Only these epistemic types, comma-separated.
    pub types: Option<String>,
    /// The state at this instant.
    pub as_of: Option<String>,
    /// Most entries (default 200).
    pub limit: Option<usize>,
    /// Tenant (development mode only).
    pub tenant: Option<String>,
}

/// One entry of a timeline.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct TimelineEntry {
    /// The memory object.
    #[serde(flatten)]
    pub card: MemoryCard,
    /// Its standing as of the timeline's instant.
    pub standing_as_of: String,
}

/// What is known about a subject over time.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct TimelineResponse {
    /// The subject as asked.
    pub subject: String,
    /// The entities it resolved to.
    pub entities: Vec<EntityCard>,
    /// Oldest first.
    pub entries: Vec<TimelineEntry>,
}

/// Parameters of a traversal.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct TraverseParams {
    /// Start node id, or an entity name.
    pub from: String,
    /// Relationship types in order, comma-separated; `<TYPE` follows one backwards
    /// (`GOVERNED_BY,<EXCEPTION_TO,APPROVED_BY`).
    pub path: String,
    /// Most paths (default 50).
    pub limit: Option<usize>,
    /// Follow the relationships as they stood at this instant (ms since the epoch, RFC 3339
    /// or `YYYY-MM-DD`). Without it, those in force now: a relation that ended ("now reports
    /// to …", "left the team") is not followed.
    pub as_of: Option<String>,
    /// Also follow relationships that have ended (default false; ignored with `as_of`).
    pub include_ended: Option<bool>,
    /// Tenant (development mode only).
    pub tenant: Option<String>,
}

/// Paths found by a traversal.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct TraverseResponse {
    /// The start node ids used.
    pub from: Vec<String>,
    /// Each path as its nodes.
    pub paths: Vec<Vec<NodeView>>,
}

impl QueryService {
    /// A node with its labels and properties.
    pub async fn node(&self, tenant: &str, id: &str) -> Result<NodeView, QueryError> {
        self.graph
            .node(tenant, id)
            .await?
            .ok_or_else(|| QueryError::NotFound(format!("no node {id:?} in tenant {tenant:?}")))
    }

    /// The nodes within `hops` of a node and the relationships between them.
    pub async fn neighborhood(
        &self,
        tenant: &str,
        id: &str,
        params: &NeighborhoodParams,
    ) -> Result<Subgraph, QueryError> {
        let hops = params.hops.unwrap_or(1);
        if !(1..=3).contains(&hops) {
            return Err(QueryError::invalid("hops must be 1, 2 or 3"));
        }
        self.graph
            .neighborhood(tenant, id, hops, params.limit.unwrap_or(100))
            .await?
            .ok_or_else(|| QueryError::NotFound(format!("no node {id:?} in tenant {tenant:?}")))
    }

    /// Alias-aware entity lookup.
    pub async fn entities(
        &self,
        tenant: &str,
        params: &EntityParams,
    ) -> Result<EntitiesResponse, QueryError> {
        if params.name.trim().len() < 2 {
            return Err(QueryError::invalid("name needs at least two characters"));
        }
        let entities = self
            .graph
            .entities(
                tenant,
                &params.name,
                params.exact.unwrap_or(false),
                params.limit.unwrap_or(20),
                as_of(params.as_of.as_deref())?,
            )
            .await?;
        Ok(EntitiesResponse { entities })
    }

    /// Contradictions as of an instant: both claims, their memory ids, sources and dates.
    pub async fn contradictions(
        &self,
        tenant: &str,
        params: &ListParams,
    ) -> Result<ContradictionsResponse, QueryError> {
        let at = as_of(params.as_of.as_deref())?;
        let limit = params.limit.unwrap_or(50);
        let include_resolved = params.include_resolved.unwrap_or(false) || at.is_some();
        let mut pairs = self
            .graph
            .contradictions(
                tenant,
                include_resolved,
                if at.is_some() { 1000 } else { limit },
            )
            .await?;
        if let Some(at) = at {
            pairs.retain(|p| {
                p.t_valid.is_none_or(|t| t <= at)
                    && (params.include_resolved.unwrap_or(false)
                        || p.t_invalid.is_none_or(|t| t > at))
            });
            pairs.truncate(limit);
        }
        Ok(ContradictionsResponse {
            contradictions: pairs,
        })
    }

    /// Open questions as of an instant, most urgent first.
    pub async fn questions(
        &self,
        tenant: &str,
        params: &ListParams,
    ) -> Result<QuestionsResponse, QueryError> {
        let at = as_of(params.as_of.as_deref())?;
        let mut questions = self
            .graph
            .open_questions(tenant, at, params.limit.unwrap_or(50))
            .await?;
        questions.retain(|q| {
            let view = AsOf { card: q, at };
            view.visible() && view.standing() == Standing::Open
        });
        Ok(QuestionsResponse { questions })
    }

    /// Questions an answer closed (by `as_of`, or now), with the answers that closed them.
    pub async fn answered_questions(
        &self,
        tenant: &str,
        params: &ListParams,
    ) -> Result<AnsweredResponse, QueryError> {
        let at = as_of(params.as_of.as_deref())?;
        let answered = self
            .graph
            .answered_questions(tenant, at, params.limit.unwrap_or(50))
            .await?;
        Ok(AnsweredResponse { answered })
    }

    /// The memory objects of highest priority K (Eq. 1).
    pub async fn priorities(
        &self,
        tenant: &str,
        params: &PriorityParams,
    ) -> Result<PrioritiesResponse, QueryError> {
        let types = parse_types(params.types.as_deref())?;
        let top = params.top.unwrap_or(20);
        let Some(at) = as_of(params.as_of.as_deref())? else {
            let priorities = self.graph.priorities(tenant, &types, top, None).await?;
            return Ok(PrioritiesResponse {
                priorities,
                as_of: None,
                k_as_of: BTreeMap::new(),
            });
        };
        // Every object valid then (by K now), re-ranked by K then where the history has it.
        let valid = self
            .graph
            .priorities(tenant, &types, crate::graph::MAX_ROWS, Some(at))
            .await?;
        let k_then: BTreeMap<String, KThen> = valid
            .iter()
            .filter_map(|m| Some((m.id.clone(), self.k_at(tenant, &m.id, at)?)))
            .collect();
        let priorities = rank_as_of(valid, &k_then, top);
        let k_as_of = k_then
            .into_iter()
            .filter(|(id, _)| priorities.iter().any(|m| &m.id == id))
            .map(|(id, then)| (id, then.k))
            .collect();
        Ok(PrioritiesResponse {
            priorities,
            as_of: Some(at),
            k_as_of,
        })
    }

    /// Supersession history of a subject, as of an instant.
    pub async fn timeline(
        &self,
        tenant: &str,
        params: &TimelineParams,
    ) -> Result<TimelineResponse, QueryError> {
        let types = parse_types(params.types.as_deref())?;
        let at = as_of(params.as_of.as_deref())?;
        let (entities, cards) = self
            .graph
            .timeline(tenant, &params.subject, &types, params.limit.unwrap_or(200))
            .await?;
        if entities.is_empty() {
            return Err(QueryError::NotFound(format!(
                "no entity named {:?} in tenant {tenant:?}",
                params.subject
            )));
        }
        let entries = cards
            .into_iter()
            .filter(|c| AsOf { card: c, at }.visible())
            .map(|card| TimelineEntry {
                standing_as_of: AsOf { card: &card, at }.standing().to_string(),
                card,
            })
            .collect();
        Ok(TimelineResponse {
            subject: params.subject.clone(),
            entities,
            entries,
        })
    }

    /// Multi-hop traversal along typed relationships, from a node id or an entity's name.
    pub async fn traverse(
        &self,
        tenant: &str,
        params: &TraverseParams,
    ) -> Result<TraverseResponse, QueryError> {
        let hops = params
            .path
            .split(',')
            .map(Hop::parse)
            .collect::<Result<Vec<_>, _>>()?;
        let mut starts = Vec::new();
        if self.graph.node(tenant, &params.from).await?.is_some() {
            starts.push(params.from.clone());
        } else {
            for entity in self
                .graph
                .entities(tenant, &params.from, true, 5, None)
                .await?
            {
                starts.push(entity.id.clone());
                starts.extend(entity.merged);
            }
        }
        if starts.is_empty() {
            return Err(QueryError::NotFound(format!(
                "no node or entity {:?} in tenant {tenant:?}",
                params.from
            )));
        }
        let limit = params.limit.unwrap_or(50);
        let validity = match as_of(params.as_of.as_deref())? {
            Some(at) => Validity::AsOf(at),
            None if params.include_ended.unwrap_or(false) => Validity::Any,
            None => Validity::Now(epigraph_schemas::now_millis()),
        };
        let mut paths = Vec::new();
        for start in &starts {
            paths.extend(
                self.graph
                    .traverse(tenant, start, &hops, limit, validity)
                    .await?,
            );
            if paths.len() >= limit {
                paths.truncate(limit);
                break;
            }
        }
        Ok(TraverseResponse {
            from: starts,
            paths,
        })
    }
}

/// The `top` of `cards` by K at an instant: `k_then[id]` where the history has it, the card's
/// K now otherwise; nodes at the same K by their value before the clamps (as recorded then,
/// or now for a card the history does not reach), as the list without `as_of` is; remaining
/// ties keep the graph's order (K now, then id).
///
/// ```
/// use std::collections::BTreeMap;
/// use epigraph_query::graph::MemoryCard;
/// use epigraph_query::reads::rank_as_of;
/// use epigraph_query::KThen;
/// let card = |id: &str, k: f64| MemoryCard { id: id.into(), k: Some(k), ..Default::default() };
/// let then = |k: f64, unclamped: Option<f64>| KThen { k, unclamped };
/// let history = BTreeMap::from([("a".to_string(), then(0.1, None))]);
/// let ranked = rank_as_of(vec![card("a", 0.9), card("b", 0.5)], &history, 2);
/// assert_eq!(ranked.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["b", "a"]);
/// // Both stood at 1 then; c was further past the bound.
/// let history = BTreeMap::from([
///     ("b".to_string(), then(1.0, Some(1.2))),
///     ("c".to_string(), then(1.0, Some(3.5))),
/// ]);
/// let ranked = rank_as_of(vec![card("b", 1.0), card("c", 1.0)], &history, 2);
/// assert_eq!(ranked.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["c", "b"]);
/// ```
pub fn rank_as_of(
    mut cards: Vec<MemoryCard>,
    k_then: &BTreeMap<String, KThen>,
    top: usize,
) -> Vec<MemoryCard> {
    let key = |m: &MemoryCard| -> (f64, f64) {
        match k_then.get(&m.id) {
            Some(then) => (then.k, then.unclamped.unwrap_or(then.k)),
            None => {
                let k = m.k.unwrap_or(-1.0);
                let unclamped = m.k_terms.as_ref().and_then(|t| t.unclamped);
                (k, unclamped.unwrap_or(k))
            }
        }
    };
    cards.sort_by(|a, b| {
        let (a, b) = (key(a), key(b));
        b.0.total_cmp(&a.0).then(b.1.total_cmp(&a.1))
    });
    cards.truncate(top);
    cards
}
