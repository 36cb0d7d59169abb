#!/usr/bin/env bash
# deploy/local/setup.sh — install what building and running epigraph needs on a fresh machine.
#
# Sourced by demo.sh and test.sh (and runnable alone). Idempotent: each step checks first.
#   - protoc (Debian protobuf-compiler): lance's build scripts run prost-build and need it;
#   - a Rust toolchain (cargo) — the machines come with rustup; we only check;
#   - Java 17+, Maven and Python for deploy/local/services.sh (checked there);
#   - for the workspace's browser test (epigraph_browser_setup, called by test.sh): Debian's
#     chromium, node and npm, and playwright-core as pinned in tests/browser/package-lock.json;
#   - Apicurio Registry, the schema registry the tests run against (epigraph_registry_setup,
#     called by services.sh fetch/up): built once from Maven Central into ~/.cache/epigraph/apicurio;
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

# Dovecot, the real IMAP server of tests/tests/imap.rs (which starts its own on a free loopback
# port with a throwaway mailbox; the Debian package's own service is never started here).
epigraph_imap_setup() {
  if [ ! -x /usr/sbin/dovecot ] && ! command -v dovecot >/dev/null 2>&1; then
    need_root_apt dovecot-imapd </dev/null || { setup_log "could not install dovecot-imapd (the IMAP test needs it)"; return 1; }
  fi
  setup_log "$(/usr/sbin/dovecot --version 2>/dev/null || dovecot --version) (dovecot-imapd)"
}

# Apicurio Registry (Confluent-compatible API at /apis/ccompat/v7), the schema registry that
# deploy/local/services.sh runs for `[kafka.schema_registry]` and tests/tests/schema_registry.rs.
# Maven Central has the application jar but no runnable build of it, so deploy/local/apicurio/pom.xml
# runs Quarkus's build step over it (why 2.4.2.Final and what is substituted: that POM's header).
# Output: $EPIGRAPH_HOME/apicurio/{apicurio-registry-runner.jar,lib/} (~130 MB), rebuilt only when
# the POM or its source changes (a marker holds their hash). ~35 s with a warm ~/.m2.
epigraph_registry_setup() {
  local here dest want marker
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  dest="$EPIGRAPH_HOME/apicurio"
  marker="$dest/.built"
  want="$(cat "$here/apicurio/pom.xml" $(find "$here/apicurio/src" -type f | sort) | sha256sum | cut -d' ' -f1)"
  if [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ] && [ -s "$dest/apicurio-registry-runner.jar" ]; then
    return 0
  fi
  command -v mvn >/dev/null 2>&1 || { setup_log "mvn not found: install Maven (apt-get install -y maven) to build the schema registry"; return 1; }
  command -v java >/dev/null 2>&1 || [ -n "${JAVA_HOME:-}" ] || { setup_log "java not found: install a JDK 17"; return 1; }
  local build="$EPIGRAPH_HOME/apicurio.build.$$" t0=$SECONDS nice_prefix=()
  if [ "${EPIGRAPH_NICE:-0}" != 0 ]; then nice_prefix=(nice -n "$EPIGRAPH_NICE"); fi
  setup_log "building Apicurio Registry from Maven Central into $dest ..."
  rm -rf "$build"
  mkdir -p "$build"
  cp -r "$here/apicurio/pom.xml" "$here/apicurio/src" "$build/"
  if ! (cd "$build" && "${nice_prefix[@]}" mvn -B -q package >"$build/mvn.log" 2>&1); then
    tail -n 30 "$build/mvn.log" >&2 || true
    setup_log "building Apicurio Registry failed (full output: $build/mvn.log)"
    return 1
  fi
  local runner
  runner="$(find "$build/target" -maxdepth 1 -name '*-runner.jar' | head -n 1)"
  [ -n "$runner" ] && [ -d "$build/target/lib" ] || { setup_log "the Apicurio build made no runner jar (see $build/mvn.log)"; return 1; }
  rm -rf "$dest"
  mkdir -p "$dest"
  mv "$runner" "$dest/apicurio-registry-runner.jar"
  mv "$build/target/lib" "$dest/lib"
  printf '%s' "$want" >"$marker"
  rm -rf "$build"
  setup_log "Apicurio Registry built in $((SECONDS - t0)) s: $dest ($(du -sh "$dest" | cut -f1))"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  case "${1:-}" in
  registry) epigraph_registry_setup ;;
  *) epigraph_setup ;;
  esac
fi
