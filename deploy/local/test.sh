#!/usr/bin/env bash
# deploy/local/test.sh — the full test suite against real Kafka, Neo4j, LanceDB and the schema
# registry (Apicurio, which services.sh up starts with the others).
#
# Installs what is missing (protoc, jars, model), starts the services if they are not running,
# the Python venv, builds, runs every test executable of `cargo test --workspace` (unit, doc and
# end-to-end tests; two at a time, deploy/local/run_tests.py), and stops the services again if
# this script started them — also when a test fails. `.ci/run` calls exactly this.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=deploy/local/setup.sh
source "$here/setup.sh"
epigraph_setup
# Headless chromium and playwright-core: the workspace's browser test runs, never skips, here.
epigraph_browser_setup
# Dovecot (Debian's dovecot-imapd): the IMAP follow test runs, never skips, here.
epigraph_imap_setup
# The Python venv (openapi-spec-validator for the query-service test, Radicale, kubernetes-validate,
# and llama-cpp-python, whose llama.cpp compiles from source on a fresh machine: ≈ 9 min on two
# cores). It installs in the background while the services start and cargo builds — the build
# leaves a core idle for long stretches — and the tests wait for it.
python_log="$(mktemp -t epigraph-python.XXXXXX)"
"$here/python.sh" >"$python_log" 2>&1 &
python_pid=$!
# The hand-labelled real-text sets: ids, fields, verbatim texts, disjoint sources (stdlib only).
python3 "$repo/eval/extraction/real/check.py" >/dev/null
# The blind-labelled Django, NumPy, SciPy, Pillow and matplotlib relation sets: ids, groups, verbatim
# evidence, both annotators' files; the release-notes, Pillow and matplotlib retrieval sets' second judges.
python3 "$repo/eval/epistemics/keps/agreement.py" "$repo/eval/epistemics/django" >/dev/null
python3 "$repo/eval/epistemics/keps/agreement.py" "$repo/eval/epistemics/numpy" >/dev/null
python3 "$repo/eval/epistemics/keps/agreement.py" "$repo/eval/epistemics/scipy" >/dev/null
python3 "$repo/eval/epistemics/keps/agreement.py" "$repo/eval/epistemics/pillow" >/dev/null
python3 "$repo/eval/epistemics/keps/agreement.py" "$repo/eval/epistemics/matplotlib" >/dev/null
python3 "$repo/eval/retrieval/releases/second/agreement.py" >/dev/null
python3 "$repo/eval/retrieval/pillow/second/agreement.py" >/dev/null
python3 "$repo/eval/retrieval/matplotlib/second/agreement.py" >/dev/null

# Services already running (a person's own, say) are used as they are. Otherwise the tests get
# their own on empty data folders in $EPIGRAPH_HOME/run-tests (and an empty
# $EPIGRAPH_HOME/test-lancedb), deleted again when every test passed (kept for a look after a
# failure, deleted by the next run): every test leaves topics, nodes and rows behind, and the
# suite slowed from 18 to 32 minutes on a machine whose data folders had
# grown over sixty sessions (docs/measurements.md). A person's data in $EPIGRAPH_HOME/run is
# never touched.
started_here=0
up_args=()
if ! services_now="$("$here/services.sh" status 2>/dev/null)"; then
  started_here=1
  # Some of a person's services running (the others stopped): start the rest beside them.
  if ! grep -qE '^(kafka|neo4j|registry) +(up|starting) ' <<<"$services_now"; then
    export EPIGRAPH_RUN_DIR="${EPIGRAPH_HOME:-$HOME/.cache/epigraph}/run-tests"
    up_args=(--fresh)
    # What a test run that was killed may have left running.
    "$here/services.sh" down >/dev/null 2>&1 || true
    # The LanceDB folder the tests write (tests/src/lib.rs), emptied with the graph and topics.
    rm -rf "${EPIGRAPH_HOME:-$HOME/.cache/epigraph}/test-lancedb"
  fi
fi
cleanup() {
  local rc=$?
  if [ "$started_here" = 1 ]; then
    "$here/services.sh" down || true
    # Only the suite's own fresh folders (--fresh) are deleted, and only after a green run.
    if [ "${#up_args[@]}" -gt 0 ] && [ "$rc" = 0 ]; then
      rm -rf "$EPIGRAPH_RUN_DIR"
    elif [ "${#up_args[@]}" -gt 0 ]; then
      echo "[test] the services' data and logs are kept in $EPIGRAPH_RUN_DIR" >&2
    fi
  fi
  exit "$rc"
}
trap cleanup EXIT

# Build while the services start: both take a while on two cores.
"$here/services.sh" up "${up_args[@]}" &
services_pid=$!
cd "$repo"
# Old test executables fill the disk until a link fails (deploy/local/prune_target.py).
python3 "$here/prune_target.py" "${CARGO_TARGET_DIR:-$repo/target}"
cargo build --workspace --all-targets --locked
# A cold build takes both cores for most of an hour; a service's start can time out beside it
# (Kafka did, in a CI run). Try once more with the cores free before giving up.
if ! wait "$services_pid"; then
  echo "[test] a service did not come up beside the build; starting them again now that it is done" >&2
  "$here/services.sh" down || true
  "$here/services.sh" up "${up_args[@]}" || { echo "[test] services failed to start; see: deploy/local/services.sh logs" >&2; exit 1; }
fi
wait "$python_pid" || { echo "[test] the Python venv could not be installed:" >&2; tail -n 30 "$python_log" >&2; exit 1; }
rm -f "$python_log"

# The test executables of `cargo test --workspace`, two at a time (most of an end-to-end test is
# waiting on the services), the doc tests beside them, the one that stops the services alone at
# the end; every executable's output and wall time, and a summary (deploy/local/run_tests.py).
python3 "$here/run_tests.py" --jobs "${EPIGRAPH_TEST_JOBS:-2}" -- --test-threads=2
