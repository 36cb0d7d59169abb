//! The proposals over HTTP:
//!
//! - `POST /v1/proposals` ([`ProposalRequest`]) proposes a change: `201` with the proposal, its
//!   diff and its state (`applied` at once under an immediate window, `conflicted` if the state
//!   moved meanwhile, else `proposed`).
//! - `GET /v1/proposals?state=&limit=` lists the tenant's proposals, newest first.
//! - `GET /v1/proposals/{id}` shows one with its history (the audit trail).
//! - `POST /v1/proposals/{id}/approve|reject|withdraw` (`{"reason"?}`) decides it.

use axum::Json;
use axum::extract::{Extension, State};
use axum::http::StatusCode;
use epigraph_query::QueryError;
use epigraph_schemas::proposals::{ProposalState, ProposerKind};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::{Decision, ProposalDesk, ProposalRequest, ProposalView};
use crate::config::TokenRole;
use crate::serve::auth::{Caller, Tenant};
use crate::serve::extract::{ApiBytes, ApiJson, ApiPath, ApiQuery};
use crate::serve::{ApiError, AppState};

/// Which proposals to list.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListProposals {
    /// Only proposals in this state (`proposed`, `approved`, `rejected`, `withdrawn`,
    /// `applied`, `conflicted`).
    pub state: Option<String>,
    /// Most proposals (default 50, at most 500).
    pub limit: Option<usize>,
    /// Tenant (development mode only).
    pub tenant: Option<String>,
}

/// Proposals, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProposalsResponse {
    /// The proposals.
    pub proposals: Vec<ProposalView>,
}

/// Why a proposal is decided so.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DecisionRequest {
    /// Why (kept in the history).
    pub reason: Option<String>,
}

/// Tenant parameter of the routes with a path.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TenantParam {
    /// Tenant (development mode only).
    pub tenant: Option<String>,
}

pub(crate) fn desk(state: &AppState) -> Result<&ProposalDesk, ApiError> {
    state.proposals.as_ref().ok_or_else(|| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "proposals need Kafka: this server has no producer for the proposals topic",
        )
    })
}

/// Propose a change to memory.
#[utoipa::path(post, operation_id = "propose", path = "/v1/proposals", request_body = ProposalRequest, tag = "proposals",
    params(("tenant" = Option<String>, Query, description = "Tenant (development mode only)")),
    responses((status = 201, body = ProposalView), (status = 400, body = crate::serve::ErrorBody),
              (status = 403, body = crate::serve::ErrorBody), (status = 404, body = crate::serve::ErrorBody),
              (status = 503, body = crate::serve::ErrorBody)))]
pub async fn propose(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    Extension(caller): Extension<Caller>,
    ApiJson(request): ApiJson<ProposalRequest>,
) -> Result<(StatusCode, Json<ProposalView>), ApiError> {
    caller.may_propose()?;
    let kind = if caller.role == TokenRole::Agent {
        ProposerKind::Agent
    } else {
        ProposerKind::Person
    };
    let view = desk(&state)?
        .propose(&state, &tenant, &caller.name, kind, request)
        .await?;
    Ok((StatusCode::CREATED, Json(view)))
}

/// The tenant's proposals, newest first.
#[utoipa::path(get, operation_id = "list_proposals", path = "/v1/proposals", tag = "proposals", params(ListProposals),
    responses((status = 200, body = ProposalsResponse), (status = 400, body = crate::serve::ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    ApiQuery(params): ApiQuery<ListProposals>,
) -> Result<Json<ProposalsResponse>, ApiError> {
    let wanted = match params.state.as_deref() {
        None => None,
        Some(name) => Some(
            ProposalState::parse(name)
                .ok_or_else(|| ApiError::bad_request(format!("unknown proposal state {name:?}")))?,
        ),
    };
    Ok(Json(ProposalsResponse {
        proposals: desk(&state)?.list(&tenant, wanted, params.limit.unwrap_or(50)),
    }))
}

/// One proposal with its history.
#[utoipa::path(get, operation_id = "get_proposal", path = "/v1/proposals/{id}", tag = "proposals", params(("id" = String, Path), TenantParam),
    responses((status = 200, body = ProposalView), (status = 404, body = crate::serve::ErrorBody)))]
pub async fn get(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<ProposalView>, ApiError> {
    desk(&state)?
        .get(&tenant, &id)
        .map(Json)
        .ok_or_else(|| QueryError::NotFound(format!("no proposal {id:?}")).into())
}

async fn decide(
    state: AppState,
    tenant: String,
    caller: Caller,
    id: String,
    decision: Decision,
    body: axum::body::Bytes,
) -> Result<Json<ProposalView>, ApiError> {
    // The body is optional: none, or `{"reason": …}`.
    let reason = if body.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        serde_json::from_slice::<DecisionRequest>(&body)
            .map_err(|e| ApiError::bad_request(format!("not a decision: {e}")))?
            .reason
    };
    let view = desk(&state)?
        .decide(&state, &tenant, &id, &caller, decision, reason)
        .await?;
    Ok(Json(view))
}

/// A decision on a proposal: `POST /v1/proposals/{id}/<action>` answered by [`decide`] with
/// one [`Decision`]; the OpenAPI description goes on the handler.
macro_rules! decision_endpoint {
    ($(#[$attr:meta])* $name:ident => $decision:expr) => {
        $(#[$attr])*
        pub async fn $name(
            State(state): State<AppState>,
            Extension(Tenant(tenant)): Extension<Tenant>,
            Extension(caller): Extension<Caller>,
            ApiPath(id): ApiPath<String>,
            ApiBytes(request): ApiBytes,
        ) -> Result<Json<ProposalView>, ApiError> {
            decide(state, tenant, caller, id, $decision, request).await
        }
    };
}

decision_endpoint! {
    /// Approve a proposal (a reviewer's token): it applies now, or conflicts.
    #[utoipa::path(post, operation_id = "approve_proposal", path = "/v1/proposals/{id}/approve", tag = "proposals", params(("id" = String, Path), TenantParam),
        request_body = Option<DecisionRequest>,
        responses((status = 200, body = ProposalView), (status = 403, body = crate::serve::ErrorBody),
                  (status = 404, body = crate::serve::ErrorBody), (status = 409, body = crate::serve::ErrorBody)))]
    approve => Decision::Approve
}

decision_endpoint! {
    /// Reject a proposal (a reviewer's token): it never applies.
    #[utoipa::path(post, operation_id = "reject_proposal", path = "/v1/proposals/{id}/reject", tag = "proposals", params(("id" = String, Path), TenantParam),
        request_body = Option<DecisionRequest>,
        responses((status = 200, body = ProposalView), (status = 403, body = crate::serve::ErrorBody),
                  (status = 404, body = crate::serve::ErrorBody), (status = 409, body = crate::serve::ErrorBody)))]
    reject => Decision::Reject
}

decision_endpoint! {
    /// Withdraw a proposal before it applies (its proposer, or a reviewer).
    #[utoipa::path(post, operation_id = "withdraw_proposal", path = "/v1/proposals/{id}/withdraw", tag = "proposals", params(("id" = String, Path), TenantParam),
        request_body = Option<DecisionRequest>,
        responses((status = 200, body = ProposalView), (status = 403, body = crate::serve::ErrorBody),
                  (status = 404, body = crate::serve::ErrorBody), (status = 409, body = crate::serve::ErrorBody)))]
    withdraw => Decision::Withdraw
}
