#!/usr/bin/env bash
# deploy/local/setup.sh — install what building and running epigraph needs on a fresh machine.
#
# Sourced by demo.sh and test.sh (and runnable alone). Idempotent: each step checks first.
#   - protoc (Debian protobuf-compiler): lance's build scripts run prost-build and need it;
#   - a Rust toolchain (cargo) — the machines come with rustup; we only check;
#   - Java 17+, Maven and Python for deploy/local/services.sh (checked there);
#   - for the workspace's browser test (epigraph_browser_setup, called by test.sh): Debian's
#     chromium, node and npm, and playwright-core as pinned in tests/browser/package-lock.json;
#   - CARGO_TARGET_DIR defaults to ~/.cache/epigraph/target, outside the checkout, so that
#     repeated runs (and CI in a fresh clone) reuse the ~20 min first build of lancedb.
set -euo pipefail

# Exported as soon as this file is sourced (not only by epigraph_setup): a cargo command run
# after `source deploy/local/setup.sh` must never start a cold build inside the checkout.
export EPIGRAPH_HOME="${EPIGRAPH_HOME:-$HOME/.cache/epigraph}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$EPIGRAPH_HOME/target}"

setup_log() { printf '[setup] %s\n' "$*" >&2; }

need_root_apt() {
  local pkg="$1"
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  setup_log "installing $pkg with apt-get"
  $sudo apt-get update -qq >/dev/null || { setup_log "apt-get update failed"; return 1; }
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$pkg" >/dev/null
}

epigraph_setup() {
  if ! command -v protoc >/dev/null 2>&1; then
    need_root_apt protobuf-compiler || { setup_log "could not install protobuf-compiler (protoc); install it and retry"; return 1; }
  fi
  if ! command -v cargo >/dev/null 2>&1; then
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
      export PATH="$HOME/.cargo/bin:$PATH"
    else
      setup_log "cargo not found: install Rust (https://rustup.rs) and retry"
      return 1
    fi
  fi
  export EPIGRAPH_HOME="${EPIGRAPH_HOME:-$HOME/.cache/epigraph}"
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$EPIGRAPH_HOME/target}"
  mkdir -p "$CARGO_TARGET_DIR"
  setup_log "protoc $(protoc --version | awk '{print $2}'), $(cargo --version), target dir $CARGO_TARGET_DIR"
}

# Headless chromium and playwright-core for tests/tests/workspace_browser.rs. Idempotent.
epigraph_browser_setup() {
  local repo
  repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
    need_root_apt chromium || { setup_log "could not install chromium (the browser test needs it)"; return 1; }
  fi
  if ! command -v npm >/dev/null 2>&1; then
    need_root_apt npm || { setup_log "could not install npm (the browser test needs it)"; return 1; }
  fi
  local pinned installed
  pinned="$(node -p "require('$repo/tests/browser/package.json').dependencies['playwright-core']")"
  installed="$(node -p "try { require('$repo/tests/browser/node_modules/playwright-core/package.json').version } catch { '' }")"
  if [ "$pinned" != "$installed" ]; then
    (cd "$repo/tests/browser" && npm ci --no-audit --no-fund --silent) || { setup_log "npm ci in tests/browser failed"; return 1; }
  fi
  setup_log "$(command -v chromium || command -v chromium-browser), node $(node --version), playwright-core $(node -p "require('$repo/tests/browser/node_modules/playwright-core/package.json').version")"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  epigraph_setup
fi
