//! Who is asking: bearer tokens mapped to tenants (`[[serve.tokens]]`), or, without tokens, a
//! loopback-only development mode where the `tenant` query parameter selects the tenant.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use epigraph_schemas::topics::valid_tenant;

use super::{ApiError, AppState};
use crate::config::{ServeConfig, TokenRole};

/// The tenant a request acts for, set by [`authenticate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tenant(pub String);

/// Who is asking, set by [`authenticate`]: the token's name and role. Without tokens
/// (development mode, loopback only) it is `local`, a reviewer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The token's name (`token-<n>` when it has none).
    pub name: String,
    /// What it may do.
    pub role: TokenRole,
    /// The call came over MCP: an agent acts (whatever the token's role, it proposes as an
    /// agent and never decides its own proposals).
    pub over_mcp: bool,
}

impl Caller {
    /// `Ok` if the caller may propose, else `403`.
    pub fn may_propose(&self) -> Result<(), ApiError> {
        if self.role == TokenRole::Reader {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                format!("token {:?} is a reader: it cannot write", self.name),
            ));
        }
        Ok(())
    }

    /// `Ok` if the caller may review judgements and approve or reject proposals, else `403`.
    pub fn may_review(&self) -> Result<(), ApiError> {
        if self.role != TokenRole::Reviewer {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                format!(
                    "token {:?} is {}: only a reviewer's token reviews, approves or rejects",
                    self.name,
                    match self.role {
                        TokenRole::Reader => "a reader",
                        _ => "an agent",
                    }
                ),
            ));
        }
        Ok(())
    }
}

/// The caller presenting `headers` (its token already checked by [`resolve`]).
///
/// ```
/// use axum::http::HeaderMap;
/// use epigraph::config::{IngestToken, ServeConfig, TokenRole};
/// use epigraph::serve::auth::caller;
/// let mut config = ServeConfig::default();
/// assert_eq!(caller(&config, &HeaderMap::new()).name, "local");
/// config.tokens.push(IngestToken { token: "s3cret".into(), tenant: "acme".into(),
///     name: None, role: TokenRole::Agent });
/// let mut headers = HeaderMap::new();
/// headers.insert("authorization", "Bearer s3cret".parse().unwrap());
/// let who = caller(&config, &headers);
/// assert_eq!((who.name.as_str(), who.role), ("token-1", TokenRole::Agent));
/// ```
pub fn caller(config: &ServeConfig, headers: &HeaderMap) -> Caller {
    if config.tokens.is_empty() {
        return Caller {
            name: "local".into(),
            role: TokenRole::Reviewer,
            over_mcp: false,
        };
    }
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .unwrap_or_default();
    config
        .tokens
        .iter()
        .enumerate()
        .find(|(_, t)| constant_time_eq(t.token.as_bytes(), presented.as_bytes()))
        .map(|(i, t)| Caller {
            name: t.name.clone().unwrap_or_else(|| format!("token-{}", i + 1)),
            role: t.role,
            over_mcp: false,
        })
        .unwrap_or(Caller {
            name: "unknown".into(),
            role: TokenRole::Reader,
            over_mcp: false,
        })
}

/// The `tenant` query parameter of a request, if any.
///
/// ```
/// use epigraph::serve::auth::tenant_parameter;
/// assert_eq!(tenant_parameter(Some("q=x&tenant=acme")), Some("acme".to_string()));
/// assert_eq!(tenant_parameter(Some("q=tenant")), None);
/// assert_eq!(tenant_parameter(None), None);
/// // Decoded as the routes decode their parameters: `%61cme` is `acme`, `+` a space.
/// assert_eq!(tenant_parameter(Some("tenant=%61cme")), Some("acme".to_string()));
/// assert_eq!(tenant_parameter(Some("ten%61nt=b+c")), Some("b c".to_string()));
/// ```
pub fn tenant_parameter(query: Option<&str>) -> Option<String> {
    serde_urlencoded::from_str::<Vec<(String, String)>>(query?)
        .ok()?
        .into_iter()
        .find(|(key, _)| key == "tenant")
        .map(|(_, value)| value)
}

/// Headers a reverse proxy adds to the requests it relays.
const RELAYED: [&str; 4] = [
    "forwarded",
    "x-forwarded-for",
    "x-forwarded-host",
    "x-real-ip",
];

/// Resolve the tenant of a request from its `Authorization` header and `tenant` parameter.
///
/// ```
/// use axum::http::HeaderMap;
/// use epigraph::config::{IngestToken, ServeConfig};
/// use epigraph::serve::auth::resolve;
/// let mut config = ServeConfig::default();
/// assert_eq!(resolve(&config, &HeaderMap::new(), Some("acme")).unwrap(), "acme");
/// assert_eq!(resolve(&config, &HeaderMap::new(), None).unwrap(), "default");
/// // Without tokens, a request a proxy relayed is refused: the loopback check cannot see past it.
/// let mut relayed = HeaderMap::new();
/// relayed.insert("x-forwarded-for", "203.0.113.9".parse().unwrap());
/// assert_eq!(resolve(&config, &relayed, Some("acme")).unwrap_err().status().as_u16(), 403);
/// config.tokens.push(IngestToken { token: "s3cret".into(), tenant: "acme".into(),
///     name: None, role: Default::default() });
/// let mut headers = HeaderMap::new();
/// assert_eq!(resolve(&config, &headers, None).unwrap_err().status().as_u16(), 401);
/// headers.insert("authorization", "Bearer s3cret".parse().unwrap());
/// assert_eq!(resolve(&config, &headers, None).unwrap(), "acme");
/// assert_eq!(resolve(&config, &headers, Some("globex")).unwrap_err().status().as_u16(), 403);
/// ```
pub fn resolve(
    config: &ServeConfig,
    headers: &HeaderMap,
    parameter: Option<&str>,
) -> Result<String, ApiError> {
    let tenant = if config.tokens.is_empty() {
        if let Some(name) = RELAYED.iter().find(|name| headers.contains_key(**name)) {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                format!(
                    "this request was relayed by a proxy ({name} header), and this service has no \
                     [[serve.tokens]]: without tokens it serves callers on loopback only, where \
                     any caller may read any tenant; configure tokens before putting it behind a proxy"
                ),
            ));
        }
        parameter
            .map(str::to_string)
            .unwrap_or_else(|| config.default_tenant.clone())
    } else {
        let presented = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim);
        let Some(presented) = presented else {
            return Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "missing bearer token: send `Authorization: Bearer <token>`",
            ));
        };
        let Some(token) = config
            .tokens
            .iter()
            .find(|t| constant_time_eq(t.token.as_bytes(), presented.as_bytes()))
        else {
            return Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unknown bearer token",
            ));
        };
        if let Some(asked) = parameter
            && asked != token.tenant
        {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                format!(
                    "this token is bound to tenant {:?}; it cannot read tenant {asked:?}",
                    token.tenant
                ),
            ));
        }
        token.tenant.clone()
    };
    if !valid_tenant(&tenant) {
        return Err(ApiError::bad_request(format!("invalid tenant {tenant:?}")));
    }
    Ok(tenant)
}

/// Whether two byte strings are equal, in a time that does not depend on where they differ (a
/// token compared byte by byte would leak its prefix to a caller timing the answers).
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Middleware: resolve the tenant and put it in the request's extensions, or answer 401/403.
pub async fn authenticate(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    let parameter = tenant_parameter(request.uri().query());
    match resolve(&state.config, request.headers(), parameter.as_deref()) {
        Ok(tenant) => {
            let who = caller(&state.config, request.headers());
            request.extensions_mut().insert(Tenant(tenant));
            request.extensions_mut().insert(who);
            next.run(request).await
        }
        Err(error) => {
            let unauthorized = error.status() == StatusCode::UNAUTHORIZED;
            let mut response = error.into_response();
            if unauthorized {
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    header::HeaderValue::from_static("Bearer realm=\"epigraph\""),
                );
            }
            response
        }
    }
}

/// Without tokens the service only listens on loopback.
pub fn check_listen(config: &ServeConfig, addr: &std::net::SocketAddr) -> anyhow::Result<()> {
    if config.tokens.is_empty() && !addr.ip().is_loopback() {
        anyhow::bail!(
            "refusing to listen on {addr} without [[serve.tokens]]: without tokens any caller could \
             read any tenant; configure tokens or listen on 127.0.0.1"
        );
    }
    Ok(())
}
