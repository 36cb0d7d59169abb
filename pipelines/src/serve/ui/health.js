// Pipeline health: the pipeline's own metrics (epigraph run's run.metrics_listen, relayed by
// serve at /metrics/pipeline: events read per topic, consumer lag, epochs and their latency,
// sink latency, vector lag, dead letters), the query service's /metrics (requests and latency
// per route, streams open, live feeds), /healthz (rows in LanceDB), how fresh the live feed is,
// the tenant's source followers as they last reported (/v1/connectors) and its dead letters
// (/v1/dead-letters).
import { ago, api, esc, live, num, render, when } from "./app.js";

/** How long ago, to the second for recent times (a connector's reports). */
const since = (ms) => {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 90) return `${s} s ago`;
  if (s < 5400) return `${Math.round(s / 60)} min ago`;
  return ago(ms);
};

/** Prometheus text → [{name, labels, value}]. */
export function parseMetrics(text) {
  const out = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const m = line.match(/^([a-zA-Z_:][\w:]*)(\{(.*)\})?\s+(\S+)/);
    if (!m) continue;
    const labels = {};
    for (const [, k, v] of (m[3] || "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[k] = v;
    out.push({ name: m[1], labels, value: Number(m[4]) });
  }
  return out;
}

/** Per route: requests, errors, mean and p95 latency (from the histogram's buckets). */
function routes(samples) {
  const by = new Map();
  const get = (route) => by.get(route) || by.set(route, { route, requests: 0, errors: 0, sum: 0, count: 0, buckets: [] }).get(route);
  for (const s of samples) {
    const route = s.labels.route;
    if (!route) continue;
    const r = get(`${s.labels.method || ""} ${route}`);
    if (s.name === "epigraph_serve_requests_total") { r.requests += s.value; if (Number(s.labels.status) >= 400) r.errors += s.value; }
    if (s.name === "epigraph_serve_request_seconds_sum") r.sum += s.value;
    if (s.name === "epigraph_serve_request_seconds_count") r.count += s.value;
    if (s.name === "epigraph_serve_request_seconds_bucket") r.buckets.push([s.labels.le === "+Inf" ? Infinity : Number(s.labels.le), s.value]);
  }
  for (const r of by.values()) {
    r.buckets.sort((a, b) => a[0] - b[0]);
    const target = r.count * 0.95;
    r.p95 = r.buckets.find(([, c]) => c >= target)?.[0];
  }
  return [...by.values()].filter((r) => r.requests > 0).sort((a, b) => b.requests - a.requests);
}

const history = { t: [], rate: [], latency: [], last: null, timer: null };

export async function healthPage(view, { reason, stale }) {
  if (reason === "snapshot" && view.querySelector("#health")) {
    // Only the freshness line moves with the live feed.
    view.querySelector("#fresh").textContent = freshness();
    return;
  }
  const [text, pipelineText, healthz, letters, connectors] = await Promise.all([
    fetch("/metrics").then((r) => (r.ok ? r.text() : Promise.reject(new Error("/metrics: " + r.status)))),
    fetch("/metrics/pipeline").then(async (r) => (r.ok ? r.text() : { error: (await r.json().catch(() => null))?.error?.message || `/metrics/pipeline: ${r.status}` }))
      .catch((e) => ({ error: e.message })),
    api("/healthz").catch((e) => ({ status: e.message })),
    api("/v1/dead-letters", { query: { limit: 100, stage: deadView.stage, source: deadView.source } }).catch((e) => ({ error: e.message, status: e.status })),
    api("/v1/connectors").catch((e) => ({ error: e.message, status: e.status })),
  ]);
  if (stale()) return;
  const samples = parseMetrics(text);
  const sum = (name) => samples.filter((s) => s.name === name).reduce((a, s) => a + s.value, 0);
  const table = routes(samples);
  const requests = sum("epigraph_serve_requests_total");
  const seconds = sum("epigraph_serve_request_seconds_sum");
  const count = sum("epigraph_serve_request_seconds_count");
  const now = Date.now() / 1000;
  if (history.last) {
    const dt = now - history.last.t;
    const dc = count - history.last.count;
    history.t.push(now);
    history.rate.push(dt > 0 ? (requests - history.last.requests) / dt : 0);
    history.latency.push(dc > 0 ? ((seconds - history.last.seconds) / dc) * 1000 : null);
    for (const series of [history.t, history.rate, history.latency]) if (series.length > 360) series.shift();
  }
  history.last = { t: now, requests, seconds, count };
  view.innerHTML = `<h1>Pipeline health</h1>
    ${pipelineSection(pipelineText)}
    ${connectorSection(connectors)}
    <h2>Query service</h2>
    <div id="health" class="cards">
      <div class="card"><span class="big" id="memory-rows">${esc(healthz.memory_rows ?? "?")}</span><span>memory rows in LanceDB <span class="muted">(${esc(healthz.status)})</span></span></div>
      <div class="card"><span class="big" id="fresh">${esc(freshness())}</span><span>live feed: last change read</span></div>
      <div class="card"><span class="big">${sum("epigraph_serve_open_streams")}</span><span>streams open (live feeds, MCP)</span></div>
      <div class="card"><span class="big">${sum("epigraph_serve_live_feeds")}</span><span>live feeds read (tenant × view)</span></div>
      <div class="card"><span class="big" id="requests">${requests}</span><span>requests answered since serve started</span></div>
    </div>
    <h2>Requests per second and mean latency <span class="muted small">sampled by this page every 5 s</span></h2>
    <div id="chart"></div>
    <h2>Per route</h2>
    <table class="list" id="routes"><thead><tr><th>route</th><th>requests</th><th>errors</th><th>mean ms</th><th>p95 ≤ ms</th></tr></thead><tbody>
    ${table.map((r) => `<tr><td><code>${esc(r.route)}</code></td><td class="num">${r.requests}</td><td class="num">${r.errors}</td>
      <td class="num">${r.count ? num((r.sum / r.count) * 1000, 1) : "–"}</td><td class="num">${r.p95 == null ? "–" : r.p95 === Infinity ? "&gt; 32 s" : num(r.p95 * 1000, 0)}</td></tr>`).join("")}
    </tbody></table>
    ${deadLetters(letters)}
    <p class="muted small">From <a href="/metrics">/metrics</a> of this server and <a href="/metrics/pipeline">/metrics/pipeline</a>, the metrics <code>epigraph run</code> exports on
    <code>run.metrics_listen</code> (default 127.0.0.1:9464; <code>serve.pipeline_metrics</code> names another place), relayed by this server.
    For history, Prometheus and Grafana: <code>deploy/prometheus/prometheus.yml</code> scrapes both, <code>deploy/grafana/epigraph.json</code> charts them.</p>`;
  drawChart(view.querySelector("#chart"));
  // Forget a stopped or silent connector (DELETE /v1/connectors; reviewers only).
  view.querySelector("#connectors")?.addEventListener("click", async (e) => {
    const button = e.target.closest("button.forget");
    if (!button) return;
    button.disabled = true;
    try {
      await api("/v1/connectors", { method: "DELETE", query: { source: button.dataset.source, target: button.dataset.target } });
      render({ reason: "forgot" });
    } catch (error) {
      button.nextElementSibling.textContent = error.message;
      button.disabled = false;
    }
  });
  view.querySelector("#dlstage")?.addEventListener("change", (e) => { deadView.stage = e.target.value; render({ reason: "filter" }); });
  view.querySelector("#dead-letters")?.addEventListener("click", (e) => {
    const link = e.target.closest("a.dlsource");
    if (!link) return;
    e.preventDefault();
    deadView.source = link.dataset.source;
    render({ reason: "filter" });
  });
  view.querySelector("#dlsource-form")?.addEventListener("submit", (e) => { e.preventDefault(); deadView.source = e.target.elements.source.value.trim(); render({ reason: "filter" }); });
  clearTimeout(history.timer);
  // The first two samples a second apart, so that the chart has a line at once.
  history.timer = setTimeout(() => render({ reason: "tick" }), history.t.length < 2 ? 1000 : 5000);
  return () => clearTimeout(history.timer);
}

/** The pipeline's own metrics (epigraph run), or why they cannot be read. */
function pipelineSection(text) {
  if (typeof text !== "string") {
    return `<h2>Pipeline <span class="muted small">epigraph run</span></h2><p class="note" id="pipeline-down" role="status">${esc(text.error)}</p>`;
  }
  const samples = parseMetrics(text);
  const total = (name) => samples.filter((s) => s.name === name).reduce((a, s) => a + s.value, 0);
  const mean = (name, labels = {}) => {
    const match = (s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v);
    const sum = samples.filter((s) => s.name === `${name}_sum` && match(s)).reduce((a, s) => a + s.value, 0);
    const count = samples.filter((s) => s.name === `${name}_count` && match(s)).reduce((a, s) => a + s.value, 0);
    return count ? num((sum / count) * 1000, 1) + " ms" : "–";
  };
  const topics = new Map();
  for (const s of samples) {
    if (!s.labels.topic) continue;
    const t = topics.get(s.labels.topic) || topics.set(s.labels.topic, { read: 0, lag: 0 }).get(s.labels.topic);
    if (s.name === "epigraph_events_in_total") t.read += s.value;
    if (s.name === "epigraph_consumer_lag") t.lag += s.value;
  }
  const sinks = [...new Set(samples.filter((s) => s.name === "epigraph_sink_seconds_count").map((s) => s.labels.sink))];
  return `<h2>Pipeline <span class="muted small">epigraph run, read now</span></h2>
    <div id="pipeline" class="cards">
      <div class="card"><span class="big" id="pipeline-lag">${total("epigraph_consumer_lag")}</span><span>messages not yet read (consumer lag)</span></div>
      <div class="card"><span class="big" id="pipeline-events">${total("epigraph_events_in_total")}</span><span>messages read since the run started</span></div>
      <div class="card"><span class="big">${total("epigraph_epochs_total")}</span><span>epochs sealed · mean ${mean("epigraph_epoch_seconds")} to output</span></div>
      ${sinks.map((sink) => `<div class="card"><span class="big">${mean("epigraph_sink_seconds", { sink })}</span><span>${esc(sink)}: mean time to apply an epoch</span></div>`).join("")}
      <div class="card"><span class="big">${total("epigraph_vector_pending_rows")}</span><span>rows waiting for a vector · oldest ${num(total("epigraph_vector_lag_seconds"), 1)} s</span></div>
      <div class="card"><span class="big">${total("epigraph_dead_letters_total")}</span><span>dead-lettered since the run started</span></div>
    </div>
    <table class="list" id="pipeline-topics"><thead><tr><th>topic</th><th>read</th><th>lag</th></tr></thead><tbody>
    ${[...topics].sort((a, b) => a[0].localeCompare(b[0])).map(([topic, t]) => `<tr><td><code>${esc(topic)}</code></td><td class="num">${t.read}</td><td class="num">${t.lag}</td></tr>`).join("")}
    </tbody></table>`;
}

/** The tenant's source followers as they last reported themselves (GET /v1/connectors). */
function connectorSection(body) {
  if (body.error) {
    return `<h2>Connectors</h2><p class="muted">${body.status === 404 ? "This server does not list connectors." : esc(body.error)}</p>`;
  }
  if (!body.connectors.length) {
    return `<h2>Connectors</h2><p class="muted" id="connectors-none">No connector has reported for this tenant (<code>epigraph ingest caldav|imap|topic</code> report on <code>&lt;prefix&gt;.connectors</code>).</p>`;
  }
  const state = (c) => {
    if (c.state === "failing") return `failing · next try in ${num(c.retry_in_ms / 1000, 0)} s`;
    if (c.state === "silent") return `silent since ${since(c.reported_at)}`;
    if (c.state === "stopped") return c.last_error ? "stopped on an error" : `stopped (${c.following ? "followed" : "read once"})`;
    return c.state;
  };
  return `<h2>Connectors <span class="muted small">source followers, as they last reported</span></h2>
    <table class="list" id="connectors"><thead><tr><th>state</th><th>connector</th><th>last success</th><th>syncs ok · failed</th><th>published · tombstoned · refused</th><th>last error</th><th></th></tr></thead><tbody>
    ${body.connectors.map((c) => `<tr class="connector ${esc(c.state)}" data-state="${esc(c.state)}"><td><span class="badge ${c.state === "up" || (c.state === "stopped" && !c.last_error) ? "" : "warn"}">${esc(state(c))}</span><br><span class="muted small">reported ${esc(since(c.reported_at))}</span></td>
      <td>${esc(c.source)}<br><code class="small">${esc(c.target)}</code></td><td>${c.last_success ? esc(when(c.last_success)) : "never"}</td>
      <td class="num">${c.syncs_ok} · ${c.syncs_failed}</td><td class="num">${c.published} · ${c.tombstoned} · ${c.dead_letters}</td><td class="small">${esc(c.last_error ?? "")}</td>
      <td>${c.state === "stopped" || c.state === "silent" ? `<button class="forget" data-source="${esc(c.source)}" data-target="${esc(c.target)}" title="Remove it from this list for good (a tombstone on the connectors topic); it comes back if its command runs again">forget</button><span class="error small"></span>` : ""}</td></tr>`).join("")}
    </tbody></table>`;
}

const deadView = { stage: "", source: "" };

/** What the connectors and the pipeline refused for this tenant (GET /v1/dead-letters). */
function deadLetters(body) {
  if (body.error) {
    return `<h2>Dead letters</h2><p class="muted">${body.status === 404 ? "This server does not list dead letters." : esc(body.error)}</p>`;
  }
  const stages = Object.entries(body.by_stage || {}).sort((a, b) => b[1] - a[1]);
  return `<h2>Dead letters <span class="muted small">what was refused for this tenant, newest first</span></h2>
    <div class="controls"><label>stage <select id="dlstage"><option value="">all (${body.total})</option>
    ${stages.map(([stage, n]) => `<option value="${esc(stage)}"${stage === deadView.stage ? " selected" : ""}>${esc(stage)} (${n})</option>`).join("")}</select></label>
    <form id="dlsource-form" class="inline"><label>source <input name="source" list="dlsources" value="${esc(deadView.source)}" placeholder="a file, folder, mailbox or topic" size="32"></label>
    <datalist id="dlsources">${Object.entries(body.by_source || {}).sort((a, b) => b[1] - a[1]).slice(0, 50).map(([source, n]) => `<option value="${esc(source)}">${n} refused</option>`).join("")}</datalist>
    <button type="submit">Filter</button></form>
    <span class="muted" id="dead-total">${body.letters.length} shown of ${body.total}</span></div>
    ${body.letters.length ? `<table class="list" id="dead-letters"><thead><tr><th>when</th><th>stage</th><th>reason</th><th>source · where</th><th>raw item</th></tr></thead><tbody>
    ${body.letters.map((l) => `<tr><td>${esc(when(l.at))}</td><td>${esc(l.stage)}</td><td>${esc(l.reason)}</td><td><a href="#" class="dlsource" data-source="${esc(l.source ?? "")}">${esc(l.source ?? "")}</a><br><code class="small">${esc(l.location)}</code></td>
      <td><details><summary>${l.raw_size} bytes</summary><pre class="raw">${esc(l.raw_preview)}</pre></details></td></tr>`).join("")}
    </tbody></table>` : `<p class="muted" id="dead-none">${deadView.source || deadView.stage ? "Nothing refused matches the filter." : "Nothing was refused."}</p>`}`;
}

function freshness() {
  const s = live.snapshot;
  if (!s) return "not yet";
  return when(s.read_at);
}

function drawChart(container) {
  if (typeof window.uPlot !== "function") { container.textContent = "uPlot did not load."; return; }
  const width = Math.max(280, Math.min(container.clientWidth || 900, 1100));
  container.dataset.points = history.t.length;
  if (history.t.length < 2) { container.innerHTML = '<p class="muted">collecting samples…</p>'; return; }
  new window.uPlot({
    width, height: 200,
    series: [{}, { label: "requests/s", stroke: "#2874a6", width: 2 }, { label: "mean ms", stroke: "#d68910", width: 2, scale: "ms" }],
    axes: [{}, { label: "req/s" }, { side: 1, scale: "ms", label: "ms", grid: { show: false } }],
    scales: { x: { time: true } },
  }, [history.t, history.rate, history.latency], container);
}
