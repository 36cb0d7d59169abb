//! A handler that panics answers an error instead of leaving its caller waiting.
//!
//! Without this, a panic inside an HTTP handler drops the connection (the client sees "no
//! answer"), and a panic inside an MCP tool is worse: rmcp runs the tool on a task of its own,
//! the task dies, and the tool call is never answered — the agent waits forever while the
//! session stays open. That is how `GET /v1/plans/overdue?as_of=-9223372036854775808` (an
//! overflow, fixed since) once held the whole injection walk of `tests/tests/injection.rs` for
//! more than 27 minutes: its MCP client waited on one call that never came back.
//!
//! Here, [`catch`] wraps every HTTP request and [`catch_tool`] every MCP tool call: a panic is
//! logged with its message and place (`tracing`, target `epigraph::serve::panics`), counted in
//! `epigraph_serve_panics_total`, and answered as `500 {"error": {"code": 500, "message": "internal error …"}}` or an MCP
//! internal error. The message says nothing of the panic itself (it may quote the store's
//! data); the log does.

use std::any::Any;
use std::panic::AssertUnwindSafe;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::FutureExt;

use super::ApiError;
use super::metrics::ServeMetrics;

/// What the caller is told: the fault is the service's, it is logged, and retrying the same
/// request will not help.
pub const INTERNAL: &str = "internal error: the service failed on this request (a bug, logged with its cause); \
     the same request will fail again";

/// The text of a panic's payload (`panic!("…")` gives a `&str` or a `String`).
///
/// ```
/// use epigraph::serve::panics::payload_text;
/// let caught = std::panic::catch_unwind(|| panic!("day {} out of range", 7)).unwrap_err();
/// assert_eq!(payload_text(caught.as_ref()), "day 7 out of range");
/// let caught = std::panic::catch_unwind(|| std::panic::panic_any(42)).unwrap_err();
/// assert_eq!(payload_text(caught.as_ref()), "(a panic without a message)");
/// ```
pub fn payload_text(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        text.to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "(a panic without a message)".into()
    }
}

/// Middleware: runs the rest of the request; a panic becomes `500` with [`INTERNAL`].
pub async fn catch(State(metrics): State<ServeMetrics>, request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    match AssertUnwindSafe(next.run(request)).catch_unwind().await {
        Ok(response) => response,
        Err(payload) => {
            metrics.panicked();
            tracing::error!(
                target: "epigraph::serve::panics",
                %method,
                path,
                cause = payload_text(payload.as_ref()),
                "a request's handler panicked; answered 500"
            );
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, INTERNAL).into_response()
        }
    }
}

/// An MCP tool call: `call`'s answer, or an internal error if it panicked.
pub async fn catch_tool<F, T>(
    tool: &str,
    metrics: Option<&ServeMetrics>,
    call: F,
) -> Result<T, rmcp::ErrorData>
where
    F: std::future::Future<Output = Result<T, rmcp::ErrorData>>,
{
    match AssertUnwindSafe(call).catch_unwind().await {
        Ok(answer) => answer,
        Err(payload) => {
            if let Some(metrics) = metrics {
                metrics.panicked();
            }
            tracing::error!(
                target: "epigraph::serve::panics",
                tool,
                cause = payload_text(payload.as_ref()),
                "an MCP tool panicked; answered an internal error"
            );
            Err(rmcp::ErrorData::internal_error(INTERNAL, None))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::body::Body;
    use axum::middleware;
    use axum::routing::get;
    use tower::ServiceExt;

    fn router(metrics: ServeMetrics) -> Router {
        Router::new()
            .route("/fine", get(|| async { "fine" }))
            .route(
                "/broken",
                get(|| async {
                    let day: i64 = std::hint::black_box(i64::MIN);
                    format!("{}", day.checked_mul(86_400_000).expect("a day in range"))
                }),
            )
            .layer(middleware::from_fn_with_state(metrics, catch))
    }

    async fn get_text(router: Router, path: &str) -> (StatusCode, String) {
        let response = router
            .oneshot(Request::get(path).body(Body::empty()).expect("request"))
            .await
            .expect("an answer");
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .expect("body");
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    #[tokio::test]
    async fn a_panicking_handler_answers_500_and_is_counted() {
        let metrics = ServeMetrics::default();
        let (status, body) = get_text(router(metrics.clone()), "/broken").await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        let body: serde_json::Value = serde_json::from_str(&body).expect("json");
        assert_eq!(body["error"]["message"], INTERNAL);
        assert!(
            !body.to_string().contains("a day in range"),
            "the panic's own message stays in the log"
        );
        assert!(
            metrics.render().contains("epigraph_serve_panics_total 1"),
            "{}",
            metrics.render()
        );
        // The service goes on.
        let (status, body) = get_text(router(metrics.clone()), "/fine").await;
        assert_eq!((status, body.as_str()), (StatusCode::OK, "fine"));
    }

    #[tokio::test]
    async fn a_panicking_tool_answers_an_internal_error() {
        let metrics = ServeMetrics::default();
        let answer: Result<u8, _> = catch_tool("list_overdue_plans", Some(&metrics), async {
            let day: i64 = std::hint::black_box(i64::MIN);
            Ok(u8::try_from(day).expect("a small day"))
        })
        .await;
        let error = answer.expect_err("an error, not a hang");
        assert_eq!(error.code, rmcp::model::ErrorCode::INTERNAL_ERROR);
        assert_eq!(error.message, INTERNAL);
        assert!(metrics.render().contains("epigraph_serve_panics_total 1"));
        let fine: Result<u8, _> = catch_tool("x", None, async { Ok(7) }).await;
        assert_eq!(fine.expect("answer"), 7);
    }
}
