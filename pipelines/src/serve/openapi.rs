//! The OpenAPI 3.1 document of the query service, generated from the handlers' annotations and
//! served at `GET /openapi.json`.

use axum::Json;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use super::api;
use epigraph_query::context::{ContextBlock, ContextItem, ContextSection};

/// Adds the bearer-token scheme.
struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// Documents the error shape on every operation: a `default` response of `ErrorBody` (every
/// error a client can cause — a malformed body or parameter, an unknown route or method, a body
/// too large, a missing token — and every failure is answered so).
struct ErrorResponses;

impl Modify for ErrorResponses {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
        let error = ResponseBuilder::new()
            .description(
                "An error, always JSON: `{\"error\": {\"code\": <HTTP status>, \"message\": \"…\"}}`",
            )
            .content(
                "application/json",
                ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name("ErrorBody")))
                    .build(),
            )
            .build();
        for item in openapi.paths.paths.values_mut() {
            let operations = [
                &mut item.get,
                &mut item.post,
                &mut item.put,
                &mut item.delete,
                &mut item.patch,
            ];
            for operation in operations.into_iter().flatten() {
                operation
                    .responses
                    .responses
                    .entry("default".to_string())
                    .or_insert_with(|| error.clone().into());
            }
        }
    }
}

/// The document.
#[derive(Debug, OpenApi)]
#[openapi(
    info(
        title = "epigraph query service",
        description = "Hybrid epistemic retrieval, context blocks and graph reads over an organisation's memory. Every error is JSON of the `ErrorBody` shape, `{\"error\": {\"code\": 400, \"message\": \"…\"}}`: malformed bodies and parameters, unknown routes (404), wrong methods (405), bodies over the limit (413), missing or unknown tokens (401). With `[[serve.tokens]]` configured every `/v1` read needs `Authorization: Bearer <token>` and acts for the token's tenant; without, the service listens on loopback only and the `tenant` parameter selects the tenant."
    ),
    paths(
        api::search,
        api::context,
        api::node,
        api::neighborhood,
        api::entities,
        api::contradictions,
        api::questions,
        api::answered_questions,
        api::overdue_plans,
        api::priorities,
        api::timeline,
        api::traverse,
        super::live::stream,
        super::reviews::review,
        super::reviews::withdraw,
        super::reviews::reviews,
        super::proposals::http::propose,
        super::proposals::http::list,
        super::proposals::http::get,
        super::proposals::http::approve,
        super::proposals::http::reject,
        super::proposals::http::withdraw,
        super::dead_letters::dead_letters,
        super::connectors::connectors,
        super::connectors::forget,
        super::history::history,
        super::history::movers
    ),
    components(schemas(ContextBlock, ContextItem, ContextSection, super::ErrorBody)),
    modifiers(&BearerAuth, &ErrorResponses),
    security(("bearer" = [])),
    tags(
        (name = "retrieval", description = "Search and context blocks"),
        (name = "graph", description = "Nodes, entities, contradictions, questions, plans past their date, priorities, timelines"),
        (name = "reviews", description = "Confirm or reject the system's judgements, and withdraw a review"),
        (name = "proposals", description = "Governed writes: propose a note, an edit or a verdict; approve, reject or withdraw; the audit trail"),
        (name = "health", description = "What the pipeline refused, and why; the source connectors as they report themselves")
    )
)]
pub struct ApiDoc;

/// `GET /openapi.json`.
pub async fn document() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_read_endpoint_is_documented() {
        let doc = serde_json::to_value(ApiDoc::openapi()).unwrap();
        let paths = doc["paths"].as_object().unwrap();
        for path in [
            "/v1/search",
            "/v1/context",
            "/v1/nodes/{id}",
            "/v1/nodes/{id}/neighborhood",
            "/v1/entities",
            "/v1/contradictions",
            "/v1/questions",
            "/v1/questions/answered",
            "/v1/plans/overdue",
            "/v1/priorities",
            "/v1/timeline",
            "/v1/traverse",
            "/v1/dashboard/stream",
            "/v1/proposals",
            "/v1/proposals/{id}",
            "/v1/proposals/{id}/approve",
        ] {
            assert!(paths.contains_key(path), "{path} is missing");
        }
        assert!(doc["components"]["schemas"]["SearchResponse"].is_object());
        assert_eq!(
            doc["paths"]["/v1/search"]["get"]["responses"]["default"]["content"]["application/json"]
                ["schema"]["$ref"],
            "#/components/schemas/ErrorBody",
            "every operation documents the error shape"
        );
    }
}
