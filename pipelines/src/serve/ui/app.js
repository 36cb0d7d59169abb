// The analyst workspace: settings, the API, the live feed and the hash router.
//
// Pages (pages.js, entity.js, health.js, proposals.js) are functions `(view, ctx) => cleanup?` that draw into
// `view`. They re-render when the live feed pushes a snapshot (unless an as-of instant is set:
// then they read the API at that instant), when the as-of instant changes, and on navigation.
import { pages } from "./pages.js";
import { entityPage } from "./entity.js";
import { healthPage } from "./health.js";
import { proposalsPage } from "./proposals.js";

export const $ = (id) => document.getElementById(id);
export const esc = (s) =>
  String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
export const num = (x, digits = 3) => (x == null ? "–" : Number(x).toFixed(digits));
// Times in the viewer's zone.
export const when = (ms) => (ms == null ? "" : new Date(ms).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }));
export const day = (ms) => (ms == null ? "" : new Date(ms).toLocaleDateString(undefined, { dateStyle: "medium" }));
export const ago = (ms) => {
  if (ms == null) return "";
  const days = (Date.now() - ms) / 86400000;
  if (days < 0) return "in " + Math.round(-days) + " d";
  if (days < 1) return Math.max(0, Math.round(days * 24)) + " h ago";
  return Math.round(days) + " d ago";
};

const params = new URLSearchParams(location.search);
export const settings = {
  tenant: params.get("tenant") || localStorage.getItem("epigraph.tenant") || "",
  token: localStorage.getItem("epigraph.token") || "",
  by: localStorage.getItem("epigraph.by") || "", // the reviewer's name, sent with reviews
  asOf: null, // ms since the epoch, or null for now (live)
};

/** GET/POST/DELETE `path` with the token (or the development tenant); JSON back, or throws. */
export async function api(path, { method = "GET", query = {}, body } = {}) {
  const url = new URL(path, location.origin);
  for (const [key, value] of Object.entries(query)) {
    if (value != null && value !== "") url.searchParams.set(key, value);
  }
  if (settings.tenant && !settings.token) url.searchParams.set("tenant", settings.tenant);
  const headers = { Accept: "application/json" };
  if (settings.token) headers.Authorization = "Bearer " + settings.token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { json = { raw: text }; }
  if (!response.ok) {
    const error = new Error(json?.error?.message || `${method} ${url.pathname}: ${response.status}`);
    error.status = response.status;
    throw error;
  }
  return json;
}

/** The as-of instant as the API takes it (RFC 3339), or null. */
export const asOfParam = () => (settings.asOf == null ? null : new Date(settings.asOf).toISOString());

// ---- the live feed -------------------------------------------------------------------------
export const live = {
  snapshot: null,      // the latest snapshot
  firstPairs: null,    // contradiction pairs of the first snapshot (not "new")
  newPairs: new Map(), // pair key → when it appeared on this page
  seenK: new Map(),    // memory id → K in the previous snapshot
  previousK: new Map(),
};
export const pairKey = (p) => p.a.id + "|" + p.b.id;
let controller = null;
let retry = 1000;

function received(snapshot) {
  live.previousK = live.seenK;
  live.seenK = new Map([...snapshot.priorities, ...snapshot.questions].map((m) => [m.id, m.k ?? 0]));
  const keys = snapshot.contradictions.map(pairKey);
  if (live.firstPairs === null) live.firstPairs = new Set(keys);
  else for (const key of keys) if (!live.firstPairs.has(key) && !live.newPairs.has(key)) live.newPairs.set(key, Date.now());
  live.snapshot = snapshot;
  status(`live · change ${snapshot.seq} · read ${new Date(snapshot.read_at).toLocaleTimeString()}`);
  document.body.dataset.seq = snapshot.seq;
  if (settings.asOf == null) render({ reason: "snapshot" });
}

function status(text) {
  $("status").textContent = text;
}

async function connect() {
  if (controller) controller.abort();
  controller = new AbortController();
  const signal = controller.signal;
  live.snapshot = null; live.firstPairs = null; live.newPairs = new Map();
  const url = new URL("/v1/dashboard/stream", location.origin);
  url.searchParams.set("top", "50");
  url.searchParams.set("limit", "100");
  if (settings.tenant && !settings.token) url.searchParams.set("tenant", settings.tenant);
  const headers = { Accept: "text/event-stream" };
  if (settings.token) headers.Authorization = "Bearer " + settings.token;
  try {
    const response = await fetch(url, { headers, signal });
    if (!response.ok) {
      const body = await response.json().catch(() => ({}));
      throw new Error(body.error?.message || response.status);
    }
    status("live · waiting for the first snapshot");
    retry = 1000;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value.replace(/\r\n/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = "message", data = "";
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) event = line.slice(6).trim();
          else if (line.startsWith("data:")) data += line.slice(5).replace(/^ /, "") + "\n";
        }
        if (event === "snapshot") received(JSON.parse(data));
        else if (event === "error") status("error: " + JSON.parse(data).message + " (retrying)");
      }
    }
    throw new Error("the stream ended");
  } catch (error) {
    if (signal.aborted) return;
    status("disconnected: " + error.message + ` · reconnecting in ${retry / 1000} s`);
    setTimeout(() => { if (!signal.aborted) connect(); }, retry);
    retry = Math.min(retry * 2, 30000);
  }
}

// ---- reviews (POST/DELETE/GET /v1/reviews) ---------------------------------------------------
export const reviews = { list: [], available: null, error: null };
export const reviewKey = (r) => `${r.relation}|${r.from}|${r.to}`;

export async function loadReviews() {
  try {
    const body = await api("/v1/reviews");
    reviews.list = body.reviews || [];
    reviews.available = true;
    reviews.error = null;
  } catch (error) {
    reviews.available = error.status === 404 || error.status === 405 ? false : reviews.available;
    reviews.error = error.message;
  }
  return reviews;
}

/** The review of a relation between two nodes, either way round, if any. */
export function reviewOf(relation, a, b) {
  return reviews.list.find((r) => r.relation === relation && ((r.from === a && r.to === b) || (r.from === b && r.to === a)));
}

/** Reload the reviews until `done(list)` holds (the server lists what the feedback topic
 * holds, a moment after publishing), for at most 10 s; then draw the page again. */
async function settle(done) {
  for (let i = 0; i < 40; i++) {
    await loadReviews();
    if (done(reviews.list)) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  render({ reason: "review" });
}
const same = (relation, from, to) => (r) =>
  r.relation === relation && ((r.from === from && r.to === to) || (r.from === to && r.to === from));

export async function review(relation, from, to, verdict, reason) {
  const by = settings.by || undefined;
  await api("/v1/reviews", { method: "POST", body: { relation, from, to, verdict, reason: reason || undefined, by } });
  await settle((list) => list.some((r) => same(relation, from, to)(r) && r.verdict === verdict));
}

export async function withdraw(relation, from, to) {
  await api("/v1/reviews", { method: "DELETE", query: { relation, from, to } });
  await settle((list) => !list.some(same(relation, from, to)));
}

// ---- routing -------------------------------------------------------------------------------
const routes = {
  priorities: pages.priorities,
  contradictions: pages.contradictions,
  questions: pages.questions,
  timeline: pages.timeline,
  entity: entityPage,
  reviews: pages.reviews,
  health: healthPage,
  proposals: proposalsPage,
};
export const routeNames = Object.keys(routes);
const LIVE_PAGES = new Set(["priorities", "contradictions", "questions", "health"]);

/** The current route and its parameters (`#/entity?name=Atlas`). */
export function route() {
  const [path, query] = location.hash.replace(/^#\/?/, "").split("?");
  const name = routes[path] ? path : "priorities";
  return { name, query: new URLSearchParams(query || "") };
}

export function go(name, query = {}) {
  const q = new URLSearchParams(query).toString();
  location.hash = "#/" + name + (q ? "?" + q : "");
}

let current = { name: null, cleanup: null, token: 0 };

/** Draw the current page (again). */
export async function render({ reason = "navigate" } = {}) {
  const { name, query } = route();
  const view = $("view");
  if (current.name !== name || reason === "navigate") {
    if (current.cleanup) current.cleanup();
    current = { name, cleanup: null, token: current.token + 1 };
    for (const link of document.querySelectorAll("nav a")) {
      link.setAttribute("aria-current", link.dataset.route === name ? "page" : "false");
    }
    document.body.dataset.page = name;
  }
  // Pages that do not show the live feed ignore its snapshots (and keep what is typed in them).
  if (reason === "snapshot" && !LIVE_PAGES.has(name)) return;
  const token = ++current.token;
  try {
    const cleanup = await routes[name](view, { query, reason, stale: () => token !== current.token });
    if (typeof cleanup === "function") current.cleanup = cleanup;
  } catch (error) {
    if (token === current.token) view.innerHTML = `<p class="error" role="alert">${esc(error.message)}</p>`;
  }
}

// ---- the header's controls -----------------------------------------------------------------
function localInput(ms) {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60000);
  return d.toISOString().slice(0, 16);
}

function setAsOf(ms) {
  settings.asOf = ms;
  $("asof").value = ms == null ? "" : localInput(ms);
  document.body.classList.toggle("as-of", ms != null);
  $("asof-label").textContent = ms == null ? "now (live)" : "as of " + when(ms);
  document.body.dataset.asOf = ms == null ? "" : String(ms);
  render({ reason: "as-of" });
}

function init() {
  $("tenant").value = settings.tenant;
  $("token").value = settings.token;
  const by = $("by");
  if (by) {
    by.value = settings.by;
    by.addEventListener("change", () => { settings.by = by.value.trim(); localStorage.setItem("epigraph.by", settings.by); });
  }
  for (const id of ["tenant", "token"]) {
    $(id).addEventListener("change", () => {
      settings[id] = $(id).value.trim();
      localStorage.setItem("epigraph." + id, settings[id]);
      connect();
      loadReviews().then(() => render({ reason: "navigate" }));
    });
  }
  $("asof").addEventListener("change", () => setAsOf($("asof").value ? new Date($("asof").value).getTime() : null));
  $("asof-now").addEventListener("click", () => setAsOf(null));
  const tz = Intl.DateTimeFormat().resolvedOptions().timeZone;
  $("zone").textContent = tz;
  const hashAsOf = route().query.get("as_of");
  if (hashAsOf) settings.asOf = new Date(hashAsOf).getTime();
  window.addEventListener("hashchange", () => render({ reason: "navigate" }));
  // Keyboard: 1–8 switch pages, "/" focuses the page's first input, Escape returns focus to
  // the page; arrows move between rows (pages.js).
  document.addEventListener("keydown", (event) => {
    if (event.target.closest("input, textarea, select") || event.altKey || event.ctrlKey || event.metaKey) return;
    const index = Number(event.key) - 1;
    if (index >= 0 && index < routeNames.length) { go(routeNames[index]); event.preventDefault(); }
    if (event.key === "/") {
      const input = $("view").querySelector("input");
      if (input) { input.focus(); event.preventDefault(); }
    }
  });
  setAsOf(settings.asOf);
  connect();
  loadReviews().then(() => render({ reason: "review" }));
}

init();
