//! The read endpoints of the query service, as thin HTTP adapters over
//! [`epigraph_query::QueryService`]: each takes its parameters from the query string (or the
//! JSON body), acts for the tenant the [`auth`](super::auth) middleware resolved, and answers
//! the core's result as JSON; the core's errors become HTTP statuses in [`ApiError`].

use axum::Json;
use axum::extract::{Extension, State};
pub use epigraph_query::briefing::ContextRequest;
use epigraph_query::context::ContextBlock;
use epigraph_query::graph::{NodeView, Subgraph};
pub use epigraph_query::plans::{OverdueParams, OverduePlan, OverdueResponse};
pub use epigraph_query::reads::{
    AnsweredResponse, ContradictionsResponse, EntitiesResponse, EntityParams, ListParams,
    NeighborhoodParams, PrioritiesResponse, PriorityParams, QuestionsResponse, TenantParams,
    TimelineEntry, TimelineParams, TimelineResponse, TraverseParams, TraverseResponse,
};
pub use epigraph_query::search::{
    ChunkResult, Explain, Level, Results, SearchParams, SearchResponse, SearchResult, SourceResult,
    parse_types,
};

use super::auth::Tenant;
use super::extract::{ApiJson, ApiPath, ApiQuery};
use super::{ApiError, AppState};

/// An endpoint whose parameters are the query string: `GET /v1/<name>?…` answered by the query
/// core's method of the same name. The attributes (the OpenAPI description) go on the handler.
macro_rules! query_endpoint {
    ($(#[$attr:meta])* $name:ident($params:ty) -> $response:ty) => {
        $(#[$attr])*
        pub async fn $name(
            State(state): State<AppState>,
            Extension(Tenant(tenant)): Extension<Tenant>,
            ApiQuery(params): ApiQuery<$params>,
        ) -> Result<Json<$response>, ApiError> {
            Ok(Json(state.query.$name(&tenant, &params).await?))
        }
    };
}

query_endpoint! {
    /// Hybrid retrieval modulated by graph state (OIDA Eq. 2).
    #[utoipa::path(get, path = "/v1/search", params(SearchParams), tag = "retrieval",
        responses((status = 200, body = SearchResponse), (status = 400, body = super::ErrorBody),
                  (status = 401, body = super::ErrorBody)))]
    search(SearchParams) -> SearchResponse
}

/// A token-budgeted context block for an agent.
#[utoipa::path(post, path = "/v1/context", request_body = ContextRequest, tag = "retrieval",
    params(("tenant" = Option<String>, Query, description = "Tenant (development mode only)")),
    responses((status = 200, body = ContextBlock), (status = 400, body = super::ErrorBody)))]
pub async fn context(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    ApiJson(request): ApiJson<ContextRequest>,
) -> Result<Json<ContextBlock>, ApiError> {
    Ok(Json(state.query.context(&tenant, &request).await?))
}

/// A node with its labels and properties.
#[utoipa::path(get, path = "/v1/nodes/{id}", tag = "graph",
    params(("id" = String, Path, description = "Node id"), TenantParams),
    responses((status = 200, body = NodeView), (status = 404, body = super::ErrorBody)))]
pub async fn node(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    ApiPath(id): ApiPath<String>,
    ApiQuery(_tenant): ApiQuery<TenantParams>,
) -> Result<Json<NodeView>, ApiError> {
    Ok(Json(state.query.node(&tenant, &id).await?))
}

/// The nodes within `hops` of a node and the relationships between them.
#[utoipa::path(get, path = "/v1/nodes/{id}/neighborhood", tag = "graph",
    params(("id" = String, Path, description = "Node id"), NeighborhoodParams),
    responses((status = 200, body = Subgraph), (status = 404, body = super::ErrorBody)))]
pub async fn neighborhood(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    ApiPath(id): ApiPath<String>,
    ApiQuery(params): ApiQuery<NeighborhoodParams>,
) -> Result<Json<Subgraph>, ApiError> {
    Ok(Json(state.query.neighborhood(&tenant, &id, &params).await?))
}

query_endpoint! {
    /// Alias-aware entity lookup.
    #[utoipa::path(get, path = "/v1/entities", tag = "graph", params(EntityParams),
        responses((status = 200, body = EntitiesResponse), (status = 400, body = super::ErrorBody)))]
    entities(EntityParams) -> EntitiesResponse
}

query_endpoint! {
    /// Contradictions: both claims, their memory ids, sources and dates.
    #[utoipa::path(get, path = "/v1/contradictions", tag = "graph", params(ListParams),
        responses((status = 200, body = ContradictionsResponse)))]
    contradictions(ListParams) -> ContradictionsResponse
}

query_endpoint! {
    /// Open questions by urgency.
    #[utoipa::path(get, path = "/v1/questions", tag = "graph", params(ListParams),
        responses((status = 200, body = QuestionsResponse)))]
    questions(ListParams) -> QuestionsResponse
}

query_endpoint! {
    /// Answered questions, each with the statement that answered it.
    #[utoipa::path(get, path = "/v1/questions/answered", tag = "graph", params(ListParams),
        responses((status = 200, body = AnsweredResponse)))]
    answered_questions(ListParams) -> AnsweredResponse
}

/// Plans past their date: standing plans whose latest date had passed by `as_of` (or now)
/// and that nothing has superseded since, the most recently due first. epigraph does not
/// know whether the work was done, only that nothing it read says so or moved the date. Plans a
/// later statement closes are listed apart, unless a reviewer rejected that reading (a review of
/// `IMPLEMENTS` from the statement to the plan).
#[utoipa::path(get, path = "/v1/plans/overdue", tag = "graph", params(OverdueParams),
    responses((status = 200, body = OverdueResponse), (status = 400, body = super::ErrorBody)))]
pub async fn overdue_plans(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    ApiQuery(params): ApiQuery<OverdueParams>,
) -> Result<Json<OverdueResponse>, ApiError> {
    let readings = super::reviews::readings(&state, &tenant);
    Ok(Json(
        state
            .query
            .overdue_plans(&tenant, &params, &readings)
            .await?,
    ))
}

query_endpoint! {
    /// The memory objects of highest priority K (Eq. 1).
    #[utoipa::path(get, path = "/v1/priorities", tag = "graph", params(PriorityParams),
        responses((status = 200, body = PrioritiesResponse)))]
    priorities(PriorityParams) -> PrioritiesResponse
}

query_endpoint! {
    /// Supersession history of a subject, as of an instant.
    #[utoipa::path(get, path = "/v1/timeline", tag = "graph", params(TimelineParams),
        responses((status = 200, body = TimelineResponse), (status = 404, body = super::ErrorBody)))]
    timeline(TimelineParams) -> TimelineResponse
}

query_endpoint! {
    /// Multi-hop traversal along typed relationships.
    #[utoipa::path(get, path = "/v1/traverse", tag = "graph", params(TraverseParams),
        responses((status = 200, body = TraverseResponse), (status = 400, body = super::ErrorBody)))]
    traverse(TraverseParams) -> TraverseResponse
}
