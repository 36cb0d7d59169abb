//! `GET /metrics` of `epigraph serve`: the query service's own Prometheus metrics (text format).
//!
//! - `epigraph_serve_requests_total{method, route, status}`: requests answered, by matched route
//!   (the route's pattern, `/v1/nodes/{id}`, never the raw path; `unmatched` for a 404 that
//!   matched no route);
//! - `epigraph_serve_request_seconds{method, route}`: seconds until the response's head (for a
//!   live stream: until it opened, not how long it stayed open);
//! - `epigraph_serve_open_streams{route}`: streamed responses (`text/event-stream`: the live feed,
//!   MCP) open now;
//! - `epigraph_serve_live_feeds`: live feeds being read (one per tenant and view, shared by every
//!   viewer of that view), read at scrape time;
//! - `epigraph_serve_panics_total`: requests and MCP tool calls whose handler panicked
//!   ([`super::panics`]: answered 500 or an internal tool error; each one is a bug).
//!
//! The pipeline (`epigraph run`) exports its own on `run.metrics_listen`
//! ([`crate::runtime::metrics`]). `deploy/grafana/epigraph.json` charts both; a test checks that
//! every metric it queries is exported by one of them. `GET /metrics/pipeline` ([`pipeline`])
//! relays the pipeline's to the browser, which cannot reach the pipeline's port itself.

use std::sync::Arc;
use std::time::Instant;

use axum::Extension;
use axum::body::Body;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use super::AppState;

/// A request's method, matched route and status.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    route: String,
    status: u16,
}

/// A request's method and matched route.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: String,
    route: String,
}

/// The route of a stream.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StreamLabels {
    route: String,
}

fn seconds() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 16))
}

/// The metrics of one query service, shared by its handlers.
#[derive(Clone, Debug)]
pub struct ServeMetrics {
    registry: Arc<Registry>,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Histogram, fn() -> Histogram>,
    streams: Family<StreamLabels, Gauge>,
    feeds: Gauge,
    overloaded: Counter,
    waiting: Gauge,
    panics: Counter,
}

impl Default for ServeMetrics {
    fn default() -> Self {
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Family::new_with_constructor(seconds as fn() -> Histogram);
        let streams = Family::<StreamLabels, Gauge>::default();
        let feeds = Gauge::default();
        let overloaded = Counter::default();
        let waiting = Gauge::default();
        let panics = Counter::default();
        let mut registry = Registry::with_prefix("epigraph_serve");
        registry.register(
            "requests",
            "Requests answered, by method, matched route and status",
            requests.clone(),
        );
        registry.register(
            "request_seconds",
            "Seconds until the response head, by method and matched route",
            latency.clone(),
        );
        registry.register(
            "open_streams",
            "Streamed responses (server-sent events) open now, by route",
            streams.clone(),
        );
        registry.register(
            "live_feeds",
            "Live feeds being read (one per tenant and view)",
            feeds.clone(),
        );
        registry.register(
            "overloaded",
            "Requests refused at once (503) because every turn was taken and the line was full",
            overloaded.clone(),
        );
        registry.register(
            "waiting",
            "Requests waiting for a turn now (serve.max_concurrent_requests)",
            waiting.clone(),
        );
        registry.register(
            "panics",
            "Requests and MCP tool calls whose handler panicked (answered 500 or an internal \
             tool error, logged with the cause: a bug)",
            panics.clone(),
        );
        ServeMetrics {
            registry: Arc::new(registry),
            requests,
            latency,
            streams,
            feeds,
            overloaded,
            waiting,
            panics,
        }
    }
}

impl ServeMetrics {
    /// A request refused by admission ([`super::admission`]).
    pub fn overloaded(&self) {
        self.overloaded.inc();
    }

    /// A request or tool call whose handler panicked ([`super::panics`]).
    pub fn panicked(&self) {
        self.panics.inc();
    }

    /// A request waiting for a turn, while the guard lives.
    pub(crate) fn waiting(&self) -> Open {
        self.waiting.inc();
        Open(self.waiting.clone())
    }

    /// The text exposition format (a labelled family appears with its first sample).
    ///
    /// ```
    /// let metrics = epigraph::serve::metrics::ServeMetrics::default();
    /// let text = metrics.render();
    /// assert!(text.contains("# TYPE epigraph_serve_live_feeds gauge"));
    /// assert!(text.contains("epigraph_serve_live_feeds 0"));
    /// ```
    pub fn render(&self) -> String {
        let mut out = String::new();
        encode(&mut out, &self.registry).expect("writing to a String");
        out
    }
}

/// Counts something open (a stream, a request waiting) while it lives.
pub(crate) struct Open(Gauge);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// Middleware: counts and times every request by its matched route, and counts the streams open.
pub async fn track(State(metrics): State<ServeMetrics>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().as_str().to_string();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|m| m.as_str().to_string())
        .unwrap_or_else(|| "unmatched".to_string());
    let response = next.run(request).await;
    metrics
        .latency
        .get_or_create(&RouteLabels {
            method: method.clone(),
            route: route.clone(),
        })
        .observe(started.elapsed().as_secs_f64());
    metrics
        .requests
        .get_or_create(&RequestLabels {
            method,
            route: route.clone(),
            status: response.status().as_u16(),
        })
        .inc();
    let streamed = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !streamed {
        return response;
    }
    let gauge = metrics
        .streams
        .get_or_create(&StreamLabels { route })
        .clone();
    gauge.inc();
    let open = Open(gauge);
    let (parts, body) = response.into_parts();
    let body = body.into_data_stream().map(move |chunk| {
        let _open = &open;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(body))
}

/// `GET /metrics`: the Prometheus text format.
pub async fn scrape(
    State(state): State<AppState>,
    Extension(metrics): Extension<ServeMetrics>,
) -> Response {
    metrics.feeds.set(state.live().feeds() as i64);
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        metrics.render(),
    )
        .into_response()
}

/// One client for reading the pipeline's metrics: short timeouts, so that a pipeline that is
/// down makes the health page say so at once instead of hanging.
static PIPELINE_CLIENT: std::sync::LazyLock<reqwest::Client> = std::sync::LazyLock::new(|| {
    reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(1))
        .timeout(std::time::Duration::from_secs(3))
        .build()
        .expect("an HTTP client builds")
});

/// `GET /metrics/pipeline`: the metrics `epigraph run` exports (`serve.pipeline_metrics`,
/// by default `run.metrics_listen` on this machine), relayed as they are (Prometheus text), for
/// the workspace's health page. `503` with the reason when the pipeline does not answer (not
/// running, or elsewhere), `404` when the relay is off.
pub async fn pipeline(State(state): State<AppState>) -> Result<Response, super::ApiError> {
    let url = state.config.pipeline_metrics.trim();
    if url.is_empty() || url.eq_ignore_ascii_case("off") {
        return Err(super::ApiError::new(
            axum::http::StatusCode::NOT_FOUND,
            "this server relays no pipeline metrics (serve.pipeline_metrics is off)",
        ));
    }
    // Never show credentials a URL may carry (`http://user:secret@host/metrics`).
    let shown = match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.to_string()
        }
        Err(_) => "serve.pipeline_metrics (not a URL)".to_string(),
    };
    let unreachable = |reason: String| {
        super::ApiError::new(
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the pipeline's metrics at {shown} do not answer: {reason} (is `epigraph run` \
                 running there?)"
            ),
        )
    };
    let response = PIPELINE_CLIENT
        .get(url)
        .send()
        .await
        .map_err(|e| unreachable(e.without_url().to_string()))?;
    if !response.status().is_success() {
        return Err(unreachable(format!("status {}", response.status())));
    }
    let text = response
        .text()
        .await
        .map_err(|e| unreachable(e.without_url().to_string()))?;
    let mut answer = text.into_response();
    answer.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::{RequestLabels, RouteLabels, ServeMetrics, StreamLabels};
    use crate::runtime::metrics::RunMetrics;

    /// The sample names each exported family shows (`# TYPE name kind` → `name_total`, …),
    /// with one sample in every labelled family (an empty one is not rendered).
    fn exported() -> BTreeMap<String, String> {
        let serve = ServeMetrics::default();
        let route = RouteLabels {
            method: "GET".into(),
            route: "/v1/search".into(),
        };
        serve
            .requests
            .get_or_create(&RequestLabels {
                method: route.method.clone(),
                route: route.route.clone(),
                status: 200,
            })
            .inc();
        serve.latency.get_or_create(&route).observe(0.01);
        serve
            .streams
            .get_or_create(&StreamLabels {
                route: "/v1/dashboard/stream".into(),
            })
            .inc();
        let run = RunMetrics::default();
        run.event("epigraph.events.chat");
        run.sink("neo4j", std::time::Duration::from_millis(5), 3);
        run.set_lag("epigraph.events.chat", 0, 1);
        run.elements
            .get_or_create(&vec![("kind".into(), "Memory:Decision".into())])
            .set(1);
        let text = serve.render() + &run.render();
        let mut samples = BTreeMap::new();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("# TYPE ") else {
                continue;
            };
            let (name, kind) = rest.split_once(' ').expect("# TYPE name kind");
            let suffixes: &[&str] = match kind {
                "counter" => &["_total"],
                "histogram" => &["_bucket", "_sum", "_count"],
                _ => &[""],
            };
            for suffix in suffixes {
                samples.insert(format!("{name}{suffix}"), kind.to_string());
            }
        }
        samples
    }

    #[test]
    fn every_metric_the_grafana_dashboard_queries_is_exported() {
        let path = epigraph_schemas::manifest_dir!().join("../deploy/grafana/epigraph.json");
        let dashboard: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).expect("the Grafana dashboard"))
                .expect("JSON");
        let exported = exported();
        assert!(exported.contains_key("epigraph_serve_requests_total"));
        assert!(exported.contains_key("epigraph_events_in_total"));
        let mut queried = 0;
        for panel in dashboard["panels"].as_array().expect("panels") {
            for target in panel["targets"].as_array().into_iter().flatten() {
                let expr = target["expr"].as_str().expect("a PromQL expression");
                let names: Vec<&str> = expr
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .filter(|w| w.starts_with("epigraph_"))
                    .collect();
                assert!(!names.is_empty(), "{expr} queries no epigraph metric");
                for name in names {
                    assert!(
                        exported.contains_key(name),
                        "{} queries {name}, which neither serve nor run exports ({:?})",
                        panel["title"],
                        exported.keys().collect::<Vec<_>>()
                    );
                    queried += 1;
                }
            }
        }
        assert!(queried >= 15, "{queried}");
    }
}
