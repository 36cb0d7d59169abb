//! Every error a client can cause is JSON in the documented shape ([`ErrorBody`](super::ErrorBody):
//! `{"error": {"code": …, "message": …}}`), never axum's plain text:
//!
//! - the extractors [`ApiJson`], [`ApiQuery`], [`ApiPath`] and [`ApiBytes`] are axum's `Json`,
//!   `Query`, `Path` and `Bytes` whose rejections (malformed or mistyped JSON, a missing JSON
//!   content type, an unknown or invalid query parameter, an undecodable path segment, a body
//!   over `serve.max_body_bytes`) are [`ApiError`]s with axum's status and explanation;
//! - [`no_route`] answers unknown paths (`404`) and [`wrong_method`] a method a path does not
//!   take (`405`);
//! - [`untyped_errors_as_json`] gives an error answered without a content type (the request
//!   timeout's empty `408`, the MCP transport's plain words) the same shape.

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;

use super::ApiError;

macro_rules! rejection_as_api_error {
    ($($rejection:ty),*) => {$(
        impl From<$rejection> for ApiError {
            /// axum's status and explanation, as JSON.
            fn from(rejection: $rejection) -> Self {
                ApiError::new(rejection.status(), rejection.body_text())
            }
        }
    )*};
}

rejection_as_api_error!(JsonRejection, QueryRejection, PathRejection, BytesRejection);

/// A JSON body (axum's `Json`), refused as an [`ApiError`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Send,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let axum::Json(value) = axum::Json::<T>::from_request(request, state).await?;
        Ok(ApiJson(value))
    }
}

/// The query string (axum's `Query`), refused as an [`ApiError`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiQuery<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiQuery<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Send,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let axum::extract::Query(value) =
            axum::extract::Query::<T>::from_request_parts(parts, state).await?;
        Ok(ApiQuery(value))
    }
}

/// Path parameters (axum's `Path`), refused as an [`ApiError`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiPath<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiPath<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Send,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let axum::extract::Path(value) =
            axum::extract::Path::<T>::from_request_parts(parts, state).await?;
        Ok(ApiPath(value))
    }
}

/// The raw body (axum's `Bytes`, within `serve.max_body_bytes`), refused as an [`ApiError`].
#[derive(Debug, Clone, Default)]
pub struct ApiBytes(pub Bytes);

impl<S> FromRequest<S> for ApiBytes
where
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        Ok(ApiBytes(Bytes::from_request(request, state).await?))
    }
}

/// The router's fallback: no route has this path (`404`).
pub async fn no_route(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!(
            "no route {method} {}: see /openapi.json for the API",
            uri.path()
        ),
    )
}

/// The fallback of a path that does not take this method (`405`).
pub async fn wrong_method(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!(
            "{} does not take {method}: see /openapi.json for its methods",
            uri.path()
        ),
    )
}

/// Largest body of an untyped error answer read into its JSON message.
const UNTYPED_ERROR_BYTES: usize = 64 * 1024;

/// Middleware (`map_response`): an error answered without a content type — the request
/// timeout's empty `408`, the plain words of the MCP transport (`406`, `415`, `400` for a
/// missing session) — becomes the JSON error of its status, its text the message; its other
/// headers are kept. Answers with a content type are left as they are.
pub async fn untyped_errors_as_json(response: Response) -> Response {
    let status = response.status();
    let is_error = status.is_client_error() || status.is_server_error();
    if !is_error || response.headers().contains_key(header::CONTENT_TYPE) {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, UNTYPED_ERROR_BYTES)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_string())
        .unwrap_or_default();
    let message = match status {
        _ if !text.is_empty() => text,
        StatusCode::REQUEST_TIMEOUT => {
            "the request took longer than serve.request_timeout_ms".to_string()
        }
        status => status.canonical_reason().unwrap_or("error").to_string(),
    };
    let mut answer = ApiError::new(status, message).into_response();
    for (name, value) in &parts.headers {
        if name == header::CONTENT_LENGTH {
            continue;
        }
        answer
            .headers_mut()
            .entry(name)
            .or_insert_with(|| value.clone());
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_untyped_error_answer_becomes_a_json_error_and_keeps_its_headers() {
        let empty = (StatusCode::REQUEST_TIMEOUT, [(header::RETRY_AFTER, "1")]).into_response();
        let answer = untyped_errors_as_json(empty).await;
        assert_eq!(answer.status(), StatusCode::REQUEST_TIMEOUT);
        assert_eq!(answer.headers()[header::CONTENT_TYPE], "application/json");
        assert_eq!(answer.headers()[header::RETRY_AFTER], "1");
        let body = axum::body::to_bytes(answer.into_body(), 1024)
            .await
            .unwrap();
        let value: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(value["error"]["code"], 408);
        let mut words = (StatusCode::NOT_ACCEPTABLE, "Not Acceptable: say so").into_response();
        words.headers_mut().remove(header::CONTENT_TYPE);
        let answer = untyped_errors_as_json(words).await;
        let body = axum::body::to_bytes(answer.into_body(), 1024)
            .await
            .unwrap();
        let value: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(value["error"]["message"], "Not Acceptable: say so");
        let text = (StatusCode::BAD_REQUEST, "plain").into_response();
        let kept = untyped_errors_as_json(text).await;
        assert!(
            kept.headers()[header::CONTENT_TYPE]
                .to_str()
                .unwrap()
                .starts_with("text/plain")
        );
    }
}
