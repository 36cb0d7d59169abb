//! The analyst workspace: `GET /dashboard` and `GET /workspace` (the page, `dashboard.html`)
//! and `GET /ui/{*file}` (its scripts, styles and the vendored Cytoscape.js and uPlot).
//!
//! Every file is compiled into the binary, so the browser loads nothing from another host and a
//! build needs no npm (`deploy/ui/vendor.sh` refreshes the vendored files from npm). For
//! working on the page without rebuilding, `EPIGRAPH_UI_DIR=pipelines/src/serve/ui` serves the
//! files under it (and `dashboard.html` beside it) from disk instead.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::extract::ApiPath;

/// The page itself.
const PAGE: &str = include_str!("dashboard.html");

/// The files under `/ui/`: name, content type, bytes.
const FILES: &[(&str, &str, &[u8])] = &[
    ("app.js", "text/javascript", include_bytes!("ui/app.js")),
    ("pages.js", "text/javascript", include_bytes!("ui/pages.js")),
    (
        "entity.js",
        "text/javascript",
        include_bytes!("ui/entity.js"),
    ),
    (
        "health.js",
        "text/javascript",
        include_bytes!("ui/health.js"),
    ),
    (
        "proposals.js",
        "text/javascript",
        include_bytes!("ui/proposals.js"),
    ),
    ("app.css", "text/css", include_bytes!("ui/app.css")),
    (
        "vendor/cytoscape.min.js",
        "text/javascript",
        include_bytes!("ui/vendor/cytoscape.min.js"),
    ),
    (
        "vendor/uPlot.iife.min.js",
        "text/javascript",
        include_bytes!("ui/vendor/uPlot.iife.min.js"),
    ),
    (
        "vendor/uPlot.min.css",
        "text/css",
        include_bytes!("ui/vendor/uPlot.min.css"),
    ),
    (
        "vendor/cytoscape.LICENSE",
        "text/plain; charset=utf-8",
        include_bytes!("ui/vendor/cytoscape.LICENSE"),
    ),
    (
        "vendor/uPlot.LICENSE",
        "text/plain; charset=utf-8",
        include_bytes!("ui/vendor/uPlot.LICENSE"),
    ),
];

/// The development directory, when set.
fn dev_dir() -> Option<std::path::PathBuf> {
    std::env::var_os("EPIGRAPH_UI_DIR").map(std::path::PathBuf::from)
}

/// `GET /workspace` (and `/dashboard`): the page.
pub async fn page() -> Response {
    let body = dev_dir()
        .and_then(|dir| std::fs::read_to_string(dir.join("../dashboard.html")).ok())
        .unwrap_or_else(|| PAGE.to_string());
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        )],
        body,
    )
        .into_response()
}

/// `GET /ui/{*file}`: a file of the page.
pub async fn file(ApiPath(name): ApiPath<String>) -> Response {
    let Some((name, content_type, bytes)) = FILES.iter().find(|(n, _, _)| *n == name) else {
        return super::ApiError::new(StatusCode::NOT_FOUND, format!("no such file: /ui/{name}"))
            .into_response();
    };
    let body = dev_dir()
        .and_then(|dir| std::fs::read(dir.join(name)).ok())
        .unwrap_or_else(|| bytes.to_vec());
    let cache = if name.starts_with("vendor/") {
        "public, max-age=86400"
    } else {
        "no-cache"
    };
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (header::CACHE_CONTROL, HeaderValue::from_static(cache)),
        ],
        body,
    )
        .into_response()
}
