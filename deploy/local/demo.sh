#!/usr/bin/env bash
# deploy/local/demo.sh — set up and run the main job on the bundled sample corpus.
#
# Installs what is missing, starts Kafka and Neo4j, builds epigraph, publishes samples/docs,
# runs the pipeline until the topics are drained, keeps it running live in the background
# (new events, feedback and the daily clock keep flowing into the graph), and serves the query
# API, MCP and the dashboard in the foreground. Ctrl-C stops both; the services keep running
# (deploy/local/services.sh down stops them).
#   DEMO_LISTEN=127.0.0.1:8080  DEMO_TENANT=sample  DEMO_DOCS=samples/docs
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=deploy/local/setup.sh
source "$here/setup.sh"
epigraph_setup

listen="${DEMO_LISTEN:-127.0.0.1:8080}"
tenant="${DEMO_TENANT:-sample}"
docs="${DEMO_DOCS:-$repo/samples/docs}"

"$here/services.sh" up &
services_pid=$!
cd "$repo"
# The same (debug, deps at opt-level 1) build as the tests: one build serves both commands.
cargo build --workspace --all-targets --locked
wait "$services_pid" || { echo "[demo] services failed to start; see: deploy/local/services.sh logs" >&2; exit 1; }

bin="$CARGO_TARGET_DIR/debug/epigraph"
"$bin" ingest docs "$docs" --tenant "$tenant"
"$bin" run --until-idle
# The live pipeline: metrics on http://127.0.0.1:9464/metrics.
"$bin" run &
run_pid=$!
trap 'kill "$run_pid" 2>/dev/null || true' EXIT
echo "[demo] dashboard:     http://$listen/dashboard?tenant=$tenant" >&2
echo "[demo] query service: http://$listen/v1/search?tenant=$tenant&q=launch+date  (OpenAPI: /openapi.json, MCP: /mcp)" >&2
echo "[demo] e.g. curl -s -X POST 'http://$listen/v1/context?tenant=$tenant' -H 'content-type: application/json' -d '{\"query\": \"budget\", \"budget_tokens\": 800}'" >&2
"$bin" serve --listen "$listen"
