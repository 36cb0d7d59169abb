#!/usr/bin/env bash
# Vector lag while a generated organisation is published into a running `epigraph run`:
# scrapes /metrics about once a second until every event is committed and every LanceDB row
# and chunk has its vector, then stops the pipeline. Uses its own topic prefix, LanceDB folder
# and state folder (under $OUT), so it touches no other view. Needs Kafka and Neo4j up
# (deploy/local/services.sh up) and a built binary (cargo build --workspace --all-targets).
#
#   benches/scripts/vector_lag.sh [scale] [seed] [epoch_max_events]
#
# Prints one line per scrape: seconds since the ingest started, epochs, consumer lag, live
# sources, rows waiting for a vector, age of the oldest, texts embedded, vectors reused,
# embedding batches and their total seconds, compactions. docs/measurements.md has a run.
set -euo pipefail
SCALE=${1:-1000}
SEED=${2:-11}
EPOCH=${3:-5000}
BIN=${EPIGRAPH_BIN:-${CARGO_TARGET_DIR:-$HOME/.cache/epigraph/target}/debug/epigraph}
TAG="vl$SEED-$SCALE-$$"
OUT=${OUT:-$(mktemp -d /tmp/vector-lag.XXXXXX)}
LISTEN=127.0.0.1:${METRICS_PORT:-19464}
"$BIN" gen "$OUT/org" --seed "$SEED" --scale "$SCALE" > /dev/null
export EPIGRAPH_STATE_DIR="$OUT/state" EPIGRAPH_LANCEDB__DIR="$OUT/lancedb" \
  EPIGRAPH_KAFKA__TOPIC_PREFIX="epigraph-measure.$TAG" EPIGRAPH_RUN__METRICS_LISTEN="$LISTEN" \
  EPIGRAPH_RUN__EPOCH_MAX_EVENTS="$EPOCH" RUST_LOG=warn
"$BIN" run > "$OUT/run.out" 2> "$OUT/run.err" &
RUN=$!
trap 'kill $RUN 2>/dev/null || true' EXIT
until curl -sf "$LISTEN/metrics" > /dev/null; do sleep 0.5; done
START=$(date +%s.%N)
since() { echo "$(date +%s.%N) - $START" | bc; }
( "$BIN" ingest events "$OUT/org/events.jsonl" --tenant "$TAG" > "$OUT/ingest.out" 2>&1
  echo "ingest done after $(since) s" > "$OUT/ingest.done" ) &
while true; do
  M=$(curl -s "$LISTEN/metrics")
  g() { echo "$M" | awk -v n="$1" '$1 == n {print $2}'; }
  LAG=$(echo "$M" | awk '/^epigraph_consumer_lag\{/ {s += $2} END {print s + 0}')
  SOURCES=$(echo "$M" | awk '/graph_elements\{kind="Source"\}/ {print $2}')
  echo "$(since) epochs=$(g epigraph_epochs_total) consumer_lag=$LAG sources=${SOURCES:-0}" \
    "pending=$(g epigraph_vector_pending_rows) lag_s=$(g epigraph_vector_lag_seconds)" \
    "embedded=$(g epigraph_vectors_embedded_total) reused=$(g epigraph_vectors_reused_total)" \
    "batches=$(g epigraph_embed_batch_seconds_count) embed_s=$(g epigraph_embed_batch_seconds_sum)" \
    "compactions=$(g epigraph_lancedb_compactions_total)"
  if [ -f "$OUT/ingest.done" ] && [ "$LAG" = 0 ] && [ "$(g epigraph_vector_pending_rows)" = 0 ] \
    && [ "$(g epigraph_vectors_embedded_total)" != 0 ]; then
    break
  fi
  sleep 1
done
cat "$OUT/ingest.done"
echo "$M" | grep -E '^epigraph_(epoch|sink)_seconds_(sum|count)'
echo "output in $OUT (topics epigraph-measure.$TAG.* are left in Kafka)"
