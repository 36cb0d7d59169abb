// Pages: priorities, contradictions, open questions, timeline and reviews.
import {
  api, asOfParam, ago, day, esc, go, live, num, pairKey, review, reviewOf, reviews, settings,
  when, withdraw, loadReviews, render,
} from "./app.js";

const TYPES = ["DECISION", "CONSTRAINT", "PLAN", "EVIDENCE", "EVALUATION", "OBSERVATION", "HYPOTHESIS", "NARRATIVE", "QUESTION"];
const typeOptions = (selected) =>
  `<option value="">all types</option>` + TYPES.map((t) => `<option${t === selected ? " selected" : ""}>${t}</option>`).join("");

const source = (m) =>
  `<span class="src">${esc(m.title || m.source_id)}${m.source_kind ? " · " + esc(m.source_kind) : ""}${m.occurred_at || m.t_valid ? " · " + esc(day(m.occurred_at ?? m.t_valid)) : ""}</span>`;
const badge = (text, cls = "") => `<span class="badge ${cls}">${esc(text)}</span>`;
const waiting = (view) => { view.innerHTML = `<p class="muted">waiting for the live feed…</p>`; };

/** Arrow keys move between the focusable rows of a list. */
function rowKeys(container, selector, activate) {
  container.addEventListener("keydown", (event) => {
    const row = event.target.closest(selector);
    if (!row) return;
    const rows = [...container.querySelectorAll(selector)];
    const i = rows.indexOf(row);
    if (event.key === "ArrowDown" && rows[i + 1]) { rows[i + 1].focus(); event.preventDefault(); }
    if (event.key === "ArrowUp" && rows[i - 1]) { rows[i - 1].focus(); event.preventDefault(); }
    if ((event.key === "Enter" || event.key === " ") && activate) { activate(row); event.preventDefault(); }
  });
  container.addEventListener("click", (event) => {
    const row = event.target.closest(selector);
    if (row && activate && !event.target.closest("button, a, input")) activate(row);
  });
}

function moveMark(m) {
  if (!live.previousK.size) return "";
  if (!live.previousK.has(m.id)) return badge("new", "new");
  const before = live.previousK.get(m.id), k = m.k ?? 0;
  if (k > before + 5e-4) return ` <span class="up" title="was ${num(before)}">▲</span>`;
  if (k < before - 5e-4) return ` <span class="down" title="was ${num(before)}">▼</span>`;
  return "";
}

// ---- priorities -----------------------------------------------------------------------------
const TERMS = [
  ["s", "type prior", "the prior of its epistemic type (Table 1)"],
  ["h", "urgency", "open questions only: age, blocking and stakes"],
  ["u", "usage", "recent retrievals, half-life 7 days"],
  ["e", "evidence", "SUPPORTS edges pointing at it"],
  ["g", "influence", "the K of its neighbours along influence edges"],
  ["c", "penalty", "subtracted: contradictions, blocks, supersessions, a retired source"],
  ["decay", "decay", "subtracted: λ·Δt·K, the force of its age"],
];
const priorityView = { type: "", selected: null };

/** One edge list of a card, each edge with its times and, where the rules kept it, why it was drawn. */
function edgeList(label, edges, relation) {
  if (!edges?.length) return "";
  return `<dt>${esc(label)}</dt><dd>${edges.map((e) =>
    `<div class="edge"><a href="#/priorities?node=${encodeURIComponent(e.id)}" data-node="${esc(e.id)}">${esc(e.id.slice(0, 12))}</a>` +
    `${e.t_invalid != null ? ' <span class="muted">(ended ' + esc(day(e.t_invalid)) + ")</span>" : ""}` +
    `${relation ? ' <span class="muted">since ' + esc(day(e.t_valid)) + "</span>" : ""}` +
    `${(e.evidence || []).length ? `<ul class="evidence small" aria-label="why it was drawn">${e.evidence.map((w) => `<li>${esc(w)}</li>`).join("")}</ul>` : ""}</div>`).join("")}</dd>`;
}

async function detail(aside, id, cards) {
  let card = cards.find((m) => m.id === id);
  aside.innerHTML = `<p class="muted">loading ${esc(id)}…</p>`;
  const node = await api(`/v1/nodes/${encodeURIComponent(id)}`).catch((e) => ({ error: e.message }));
  if (!card && node.properties) {
    const p = node.properties;
    card = { id, memory_type: p.type, text: p.text, standing: p.standing, k: p.k, source_id: p.source_id, title: p.title, t_valid: p.t_valid,
      k_terms: p.k == null ? null : { s: p.k_s, h: p.k_h, u: p.k_u, e: p.k_e, g: p.k_g, c: p.k_c, decay: p.k_decay, dt: p.k_dt, unclamped: p.k_unclamped } };
  }
  if (!card) { aside.innerHTML = `<p class="error">${esc(node.error || "not found")}</p>`; return; }
  const t = card.k_terms || {};
  const max = Math.max(0.001, ...TERMS.map(([k]) => Math.abs(t[k] ?? 0)));
  aside.innerHTML = `<h2 id="detail-title">Why K = ${num(card.k)}</h2>
    <p>${badge(card.memory_type)} ${badge(card.standing, card.standing)} ${esc(card.text)}</p>
    <p>${source(card)}</p>
    <table class="terms" aria-label="terms of K (Eq. 1)"><thead><tr><th>term</th><th>value</th><th></th></tr></thead><tbody>
    ${TERMS.map(([k, name, meaning]) => `<tr data-term="${k}"><th title="${esc(meaning)}">${k} <span class="muted">${esc(name)}</span></th>
      <td class="num">${num(t[k])}</td><td><span class="bar ${k === "c" || k === "decay" ? "neg" : ""}" style="width:${Math.round((Math.abs(t[k] ?? 0) / max) * 100)}%"></span></td></tr>`).join("")}
    <tr><th>Δt <span class="muted">age, days</span></th><td class="num">${num(t.dt, 1)}</td><td></td></tr>
    ${t.unclamped != null && card.k != null && Math.abs(t.unclamped - card.k) >= 0.0005 ? `<tr data-term="unclamped"><th title="K* before the clamp to [0, 1]: how far the terms carry this node past the bound; orders nodes of equal K">before the clamp</th><td class="num">${num(t.unclamped)}</td><td></td></tr>` : ""}
    </tbody></table>
    <p class="muted small">K* = clamp((η·(s+h+u+e+g) − c) / (η + λ·Δt)) — docs/priority.md.</p>
    <h3>K over time</h3><div id="ktrend" class="trend"><p class="muted">loading its history…</p></div>
    <dl class="edges">
      ${edgeList("contradicts", card.contradicts, true)}${edgeList("superseded by", card.superseded_by, true)}
      ${edgeList("supersedes", card.supersedes, true)}${edgeList("answered by", card.answered_by, true)}
      ${edgeList("answers", card.answers, true)}${edgeList("holds up", card.blocks, true)}${edgeList("held up by", card.blocked_by, true)}
      ${card.supported ? `<dt>supported by</dt><dd>${card.supported} statement(s)</dd>` : ""}
      ${(card.claims || []).length ? `<dt>claims</dt><dd>${card.claims.map((c) => esc([c.subject, c.attribute, c.qualifier, c.value, c.unit].filter(Boolean).join(" "))).join("<br>")}</dd>` : ""}
    </dl>
    <h3>Grounds and support</h3><div id="grounds" class="small"><p class="muted">loading its links…</p></div>
    ${node.labels ? `<p class="muted small">node ${esc(node.id)} · ${esc(node.labels.join(", "))}</p>` : ""}`;
  trend(aside.querySelector("#ktrend"), id);
  grounds(aside.querySelector("#grounds"), id);
  aside.querySelectorAll("a[data-node]").forEach((a) => a.addEventListener("click", (event) => {
    event.preventDefault();
    priorityView.selected = a.dataset.node;
    detail(aside, a.dataset.node, cards);
  }));
}

/** The signed edges the card's lists do not hold (SUPPORTS, BASED_ON, REFINES, …), each with the other end's text and why it was drawn. */
const GROUNDS = ["SUPPORTS", "BASED_ON", "DERIVES_FROM", "IMPLEMENTS", "REFINES", "ENABLES", "PRECEDES", "SAME_STATEMENT"];
/** The grounds a reviewer can confirm or reject (the rest are drawn from citations and copies). */
const REVIEWABLE_GROUNDS = new Set(["SUPPORTS", "IMPLEMENTS"]);
async function grounds(box, id) {
  let graph;
  try {
    graph = await api(`/v1/nodes/${encodeURIComponent(id)}/neighborhood`, { query: { hops: 1, limit: 60 } });
  } catch (error) {
    box.innerHTML = `<p class="error">${esc(error.message)}</p>`;
    box.dataset.loaded = "error";
    return;
  }
  const nodes = new Map(graph.nodes.map((n) => [n.id, n]));
  const edges = graph.edges.filter((e) => GROUNDS.includes(e.type) && (e.from === id || e.to === id));
  box.innerHTML = edges.length ? `<ul class="plain">${edges.map((e) => {
    const outgoing = e.from === id;
    const other = nodes.get(outgoing ? e.to : e.from);
    const text = other?.properties?.text || other?.properties?.title || (outgoing ? e.to : e.from);
    const why = e.properties?.evidence || [];
    return `<li data-edge="${esc(e.type)}">${outgoing ? "" : "← "}<strong>${esc(e.type)}</strong>${outgoing ? " →" : ""} <a href="#/priorities?node=${encodeURIComponent(other?.id || "")}">${esc(text.slice(0, 140))}</a>` +
      `${other?.properties?.title ? ` <span class="muted">(${esc(other.properties.title)})</span>` : ""}` +
      `${why.length ? `<ul class="evidence" aria-label="why it was drawn">${why.map((w) => `<li>${esc(w)}</li>`).join("")}</ul>` : ""}` +
      `${REVIEWABLE_GROUNDS.has(e.type) ? `<div class="review">${reviewControls(e.type, e.from, e.to)}</div>` : ""}</li>`;
  }).join("")}</ul>` : '<p class="muted">No grounds, support or restatements drawn to or from it.</p>';
  reviewButtons(box);
  box.dataset.loaded = edges.length;
}

/** K's samples (`/v1/priorities/history`), drawn with uPlot: K and the penalty c. */
async function trend(container, id) {
  const history = await api("/v1/priorities/history", { query: { node: id } }).catch((e) => ({ error: e.message }));
  if (!container.isConnected) return;
  if (history.error) { container.innerHTML = `<p class="error">${esc(history.error)}</p>`; return; }
  const samples = history.samples || [];
  container.dataset.samples = samples.length;
  if (!samples.length) { container.innerHTML = `<p class="muted">no samples yet (the pipeline records one whenever an epoch changes K)</p>`; return; }
  const rows = samples.map((x) => `${when(x.at)}: K ${num(x.k)} (c ${num(x.terms.c)})`).join("; ");
  container.innerHTML = `<p class="muted small">${samples.length} sample(s), first ${esc(when(samples[0].at))}</p>`;
  if (samples.length < 2 || typeof window.uPlot !== "function") {
    container.insertAdjacentHTML("beforeend", `<p class="small">${esc(rows)}</p>`);
    return;
  }
  const width = Math.max(260, Math.min(container.clientWidth || 420, 600));
  const chart = document.createElement("div");
  chart.setAttribute("role", "img");
  chart.setAttribute("aria-label", "K over time: " + rows);
  container.appendChild(chart);
  new window.uPlot({
    width, height: 160,
    series: [{}, { label: "K", stroke: "#2874a6", width: 2 }, { label: "c", stroke: "#c0392b", width: 1, dash: [4, 4] }],
    axes: [{}, { size: 40 }],
    scales: { x: { time: true }, y: { range: [0, 1] } },
  }, [samples.map((x) => x.at / 1000), samples.map((x) => x.k), samples.map((x) => x.terms.c)], chart);
}

const moverView = { since: "day" };
const SINCE = { day: 86_400_000, week: 7 * 86_400_000, hour: 3_600_000 };

/** What rose and fell most in K (`/v1/priorities/movers`). */
async function movers(container) {
  const since = Date.now() - SINCE[moverView.since];
  const answer = await api("/v1/priorities/movers", { query: { since, limit: 5 } }).catch((e) => ({ error: e.message }));
  if (!container.isConnected) return;
  if (answer.error) { container.innerHTML = `<p class="error">${esc(answer.error)}</p>`; return; }
  const list = (title, items, cls) => `<div><h3>${title}</h3>${items.length ? `<ol class="movers">${items.map((m) =>
    `<li><a href="#/priorities?node=${encodeURIComponent(m.node)}" data-node="${esc(m.node)}">${esc(m.card?.text || m.node)}</a>
     <span class="${cls}">${m.delta > 0 ? "+" : ""}${num(m.delta)}</span> <span class="muted small">${num(m.k_then)} → ${num(m.k_now)}</span></li>`).join("")}</ol>`
    : `<p class="muted">none</p>`}</div>`;
  container.innerHTML = `<div class="controls"><label>movers since <select id="msince">
      ${Object.keys(SINCE).map((k) => `<option value="${k}"${k === moverView.since ? " selected" : ""}>a ${k} ago</option>`).join("")}</select></label></div>
    <div class="movers-grid">${list("Rose most", answer.risers, "up")}${list("Fell most", answer.fallers, "down")}</div>`;
  container.querySelector("#msince").addEventListener("change", (e) => { moverView.since = e.target.value; movers(container); });
}

async function priorities(view, { query, stale }) {
  if (query.get("node")) priorityView.selected = query.get("node");
  let cards;
  let note = "";
  if (settings.asOf == null) {
    if (!live.snapshot) return waiting(view);
    cards = live.snapshot.priorities;
  } else {
    const answer = await api("/v1/priorities", { query: { top: 200, as_of: asOfParam() } });
    const then = answer.k_as_of || {};
    cards = answer.priorities.map((m) => (m.id in then ? { ...m, k_now: m.k, k: then[m.id], k_when: "then" } : { ...m, k_when: "now" }));
    const recorded = cards.filter((m) => m.k_when === "then").length;
    note = `<p class="note" id="asof-note">As of ${esc(when(settings.asOf))}: the memory objects valid then, ranked by K as recorded then where K's history reaches back (${recorded} of ${cards.length}), by K now otherwise (marked <em>now</em>). Select one for its K over time.</p>`;
  }
  if (stale()) return;
  if (priorityView.type) cards = cards.filter((m) => m.memory_type === priorityView.type);
  const focused = document.activeElement?.dataset?.id;
  view.innerHTML = `<h1>Priorities</h1>${note}
    <div class="controls"><label>type <select id="ptype">${typeOptions(priorityView.type)}</select></label>
    <span class="muted">${cards.length} shown · highest K (Eq. 1) first · select a row for its terms</span></div>
    <div class="split"><table class="list" id="priorities"><thead><tr><th>#</th><th>K</th><th>type · standing</th><th>statement</th></tr></thead><tbody>
    ${cards.map((m, i) => `<tr tabindex="0" data-id="${esc(m.id)}" aria-selected="${m.id === priorityView.selected}">
      <td class="num">${i + 1}</td><td class="num k">${num(m.k)}${m.k_when ? ` <span class="muted small" data-k-when="${m.k_when}">${m.k_when}</span>` : ""}${moveMark(m)}<br><span class="bar" style="width:${Math.round((m.k ?? 0) * 100)}%"></span></td>
      <td>${badge(m.memory_type)}<br>${badge(m.standing, m.standing)}${(m.blocked_by || []).some((e) => e.t_invalid == null) ? badge("held up", "warn") : ""}</td>
      <td>${esc(m.text)}<br>${source(m)}</td></tr>`).join("")}
    </tbody></table><aside id="detail" aria-live="polite" aria-labelledby="detail-title"><p class="muted">Select a row to see why it stands where it does.</p></aside></div>
    <section id="movers" aria-label="movers"><p class="muted">loading movers…</p></section>`;
  movers(view.querySelector("#movers"));
  view.querySelector("#ptype").addEventListener("change", (e) => { priorityView.type = e.target.value; render({ reason: "filter" }); });
  const aside = view.querySelector("#detail");
  rowKeys(view.querySelector("#priorities"), "tr[data-id]", (row) => {
    priorityView.selected = row.dataset.id;
    view.querySelectorAll("tr[data-id]").forEach((r) => r.setAttribute("aria-selected", r === row));
    detail(aside, row.dataset.id, cards);
  });
  if (focused) view.querySelector(`tr[data-id="${CSS.escape(focused)}"]`)?.focus();
  if (priorityView.selected) await detail(aside, priorityView.selected, cards);
}

// ---- contradictions ---------------------------------------------------------------------------
const contradictionView = { text: "", type: "", age: "" };

function side(m) {
  return `<div class="side" data-side="${esc(m.id)}">
    <p>${badge(m.memory_type)} ${badge(m.standing, m.standing)}</p>
    <blockquote>${esc(m.text)}</blockquote>
    ${(m.claims || []).length ? `<p class="claims">${m.claims.map((c) => `<code>${esc([c.subject, c.attribute].filter(Boolean).join(" · "))}</code> = <strong>${esc([c.qualifier, c.value, c.unit].filter(Boolean).join(" "))}</strong>`).join("<br>")}</p>` : ""}
    <p class="src">${esc(m.title || m.source_id)}<br>${esc(m.source_kind || "source")} · ${esc(m.source_id)}<br>written ${esc(when(m.occurred_at ?? m.t_valid))}</p>
  </div>`;
}

function reviewControls(relation, from, to, labels = {}) {
  if (reviews.available === false) return `<span class="muted small">reviews are not available on this server</span>`;
  const r = reviewOf(relation, from, to);
  if (r) {
    return `<span class="badge ${r.verdict === "reject" ? "rejected" : "confirmed"}" data-review="${esc(r.verdict)}">${r.verdict === "reject" ? "rejected" : "confirmed"}</span>
      <span class="muted small">${r.by ? "by " + esc(r.by) + " " : ""}${esc(when(r.at))}${r.reason ? " · " + esc(r.reason) : ""}${r.verdict === "reject" && !labels.immediate ? " · leaves after the pipeline's next epoch" : ""}</span>
      <button type="button" data-act="withdraw" data-relation="${relation}" data-from="${esc(r.from)}" data-to="${esc(r.to)}">Withdraw</button>`;
  }
  return `<input type="text" class="reason" placeholder="reason (optional)" aria-label="reason">
    <button type="button" data-act="confirm" data-relation="${relation}" data-from="${esc(from)}" data-to="${esc(to)}">Confirm</button>
    <button type="button" data-act="reject" data-relation="${relation}" data-from="${esc(from)}" data-to="${esc(to)}">${esc(labels.reject || "Reject")}</button>`;
}

/** A late plan's rejected readings ("this statement does not close it"), each withdrawable. */
function rejectedReadings(late) {
  return (late.not_closed_by || []).map((report) => `<div class="review small" data-rejected-report="${esc(report.id)}">not closed by “${esc(report.text)}” (${source(report)}): ${reviewControls("IMPLEMENTS", report.id, late.plan.id, { immediate: true })}</div>`).join("");
}

/** Wires the review buttons of `container`. */
function reviewButtons(container) {
  container.addEventListener("click", async (event) => {
    const button = event.target.closest("button[data-act]");
    if (!button) return;
    const { act, relation, from, to } = button.dataset;
    const reason = button.parentElement.querySelector("input.reason")?.value;
    button.disabled = true;
    try {
      if (act === "withdraw") await withdraw(relation, from, to);
      else await review(relation, from, to, act, reason);
    } catch (error) {
      button.disabled = false;
      button.insertAdjacentHTML("afterend", ` <span class="error" role="alert">${esc(error.message)}</span>`);
    }
  });
}

async function contradictions(view, { stale }) {
  let pairs;
  if (settings.asOf == null) {
    if (!live.snapshot) return waiting(view);
    pairs = live.snapshot.contradictions;
  } else {
    pairs = (await api("/v1/contradictions", { query: { as_of: asOfParam(), limit: 200 } })).contradictions;
  }
  if (stale()) return;
  const total = pairs.length;
  const { text, type, age } = contradictionView;
  const needle = text.toLowerCase();
  pairs = pairs.filter((p) =>
    (!needle || [p.a, p.b].some((m) => [m.text, m.title, m.source_id, ...(m.claims || []).map((c) => c.subject)].some((s) => (s || "").toLowerCase().includes(needle)))) &&
    (!type || p.a.memory_type === type || p.b.memory_type === type) &&
    (!age || (p.t_valid != null && Date.now() - p.t_valid <= Number(age) * 86400000)));
  const hadFocus = view.contains(document.activeElement) ? document.activeElement.id : null;
  // Reasons being typed survive a live update.
  const typed = new Map([...view.querySelectorAll("article.pair")].map((a) => [a.dataset.pair, a.querySelector("input.reason")?.value]).filter(([, v]) => v));
  view.innerHTML = `<h1>Contradictions</h1>
    ${settings.asOf != null ? `<p class="note">Standing as of ${esc(when(settings.asOf))}.</p>` : ""}
    <div class="controls">
      <label>entity or text <input id="cfilter" type="search" value="${esc(text)}" placeholder="e.g. Lighthouse"></label>
      <label>type <select id="ctype">${typeOptions(type)}</select></label>
      <label>began <select id="cage"><option value="">any time</option>${[7, 30, 90, 365].map((d) => `<option value="${d}"${String(d) === age ? " selected" : ""}>in the last ${d} days</option>`).join("")}</select></label>
      <span class="muted">${pairs.length} of ${total} standing pairs</span>
    </div>
    <div id="pairs">${pairs.length ? pairs.map((p) => {
      const key = pairKey(p);
      const fresh = settings.asOf == null && live.newPairs.has(key);
      return `<article class="pair${fresh ? " fresh" : ""}" data-pair="${esc(key)}"${fresh ? " data-new" : ""} tabindex="0" aria-label="contradiction">
        <header>${fresh ? badge("new", "new") + " " : ""}<span>disagree since ${esc(when(p.t_valid))}</span>
        <span class="muted small">learned ${esc(when(p.recorded_at))}</span></header>
        ${(p.why || []).length ? `<p class="why small" aria-label="why they disagree">${p.why.map(esc).join("<br>")}</p>` : ""}
        <div class="sides">${side(p.a)}<div class="vs" aria-hidden="true">≠</div>${side(p.b)}</div>
        <footer class="review">${reviewControls("CONTRADICTS", p.a.id, p.b.id)}</footer></article>`;
    }).join("") : `<p class="muted" id="no-pairs">No standing contradictions${total ? " match the filters" : ""}.</p>`}</div>`;
  const rerender = () => render({ reason: "filter" });
  view.querySelector("#cfilter").addEventListener("input", (e) => { contradictionView.text = e.target.value; rerender(); });
  view.querySelector("#ctype").addEventListener("change", (e) => { contradictionView.type = e.target.value; rerender(); });
  view.querySelector("#cage").addEventListener("change", (e) => { contradictionView.age = e.target.value; rerender(); });
  if (hadFocus) { const el = view.querySelector("#" + hadFocus); if (el) { el.focus(); try { el.setSelectionRange(el.value.length, el.value.length); } catch { /* not a text field */ } } }
  for (const [key, value] of typed) {
    const input = view.querySelector(`article.pair[data-pair="${CSS.escape(key)}"] input.reason`);
    if (input) input.value = value;
  }
  reviewButtons(view.querySelector("#pairs"));
  rowKeys(view.querySelector("#pairs"), "article.pair", null);
}

// ---- open questions ---------------------------------------------------------------------------
async function questions(view, { stale }) {
  let list;
  if (settings.asOf == null) {
    if (!live.snapshot) return waiting(view);
    list = live.snapshot.questions;
  } else {
    list = (await api("/v1/questions", { query: { as_of: asOfParam(), limit: 200 } })).questions;
  }
  if (stale()) return;
  const holds = (m) => (m.blocks || []).filter((e) => e.t_invalid == null);
  view.innerHTML = `<h1>Open questions</h1>
    ${settings.asOf != null ? `<p class="note">Open as of ${esc(when(settings.asOf))}.</p>` : ""}
    <p class="muted">${list.length} open · most urgent (highest K) first · the urgency term h grows with age, blocking and stakes</p>
    <table class="list" id="questions"><thead><tr><th>K</th><th>h</th><th>question</th><th>asked</th><th>holds up</th></tr></thead><tbody>
    ${list.map((m) => `<tr tabindex="0" data-id="${esc(m.id)}"><td class="num k">${num(m.k)}${m.k_when ? ` <span class="muted small" data-k-when="${m.k_when}">${m.k_when}</span>` : ""}${moveMark(m)}</td><td class="num">${num(m.k_terms?.h)}</td>
      <td>${esc(m.text)}<br>${source(m)}</td><td title="${esc(when(m.t_valid))}">${esc(ago(m.t_valid))}</td>
      <td>${holds(m).length ? `<details data-question="${esc(m.id)}" data-blocks="${esc(holds(m).map((e) => e.id).join(","))}"><summary>${holds(m).length} statement(s)</summary><ul class="held"></ul></details>` : '<span class="muted">nothing</span>'}</td></tr>`).join("")}
    </tbody></table>
    <h2 id="answered-h">Answered</h2>
    <p class="muted small">A question leaves the open list when a later statement answers it (an ANSWERS edge). If the answer is wrong, reopen the question: the edge is rejected and the question stands open again after the pipeline's next epoch.</p>
    <div id="answered" aria-labelledby="answered-h"><p class="muted">loading…</p></div>
    <h2 id="overdue-h">Plans past their date</h2>
    <p class="muted small">Standing plans whose latest date has passed and that no later statement moved or superseded, the most recently due first. A plan a later statement reports done ("the Slack connector shipped") is listed apart, with that statement, to check the reading: confirm it, or say "Not done" and the plan is late again at once; for the others nothing read says the work was done.</p>
    <div id="overdue" aria-labelledby="overdue-h"><p class="muted">loading…</p></div>`;
  const overdueBox = view.querySelector("#overdue");
  api("/v1/plans/overdue", { query: { as_of: asOfParam(), limit: 50 } }).then(({ plans, reported_done: done = [] }) => {
    if (stale()) return;
    overdueBox.innerHTML = (plans.length ? `<table class="list" id="overdue-plans"><thead><tr><th>due</th><th>late by</th><th>plan</th></tr></thead><tbody>
      ${plans.map((x) => `<tr tabindex="0" data-id="${esc(x.plan.id)}"><td class="num"><time datetime="${esc(x.due)}">${esc(x.due)}</time></td><td class="num">${x.days_overdue} d</td><td>${esc(x.plan.text)}<br>${source(x.plan)}${rejectedReadings(x)}</td></tr>`).join("")}
      </tbody></table>`
      : '<p class="muted" id="no-overdue">No plan is past its date.</p>')
      + (done.length ? `<details id="reported-done"><summary>${done.length} past their date but reported done</summary><table class="list"><thead><tr><th>due</th><th>plan</th><th>reported done by</th><th>the reading</th></tr></thead><tbody>
      ${done.map((x) => `<tr data-id="${esc(x.plan.id)}" data-report="${esc(x.report.id)}"><td class="num"><time datetime="${esc(x.due)}">${esc(x.due)}</time></td><td>${esc(x.plan.text)}<br>${source(x.plan)}</td><td>${esc(x.report.text)}<br>${source(x.report)} <span class="muted small">${esc(when(x.report.t_valid))} · ${x.via === "implements" ? "carries it out" : "says it was done"}</span></td><td class="review">${reviewControls("IMPLEMENTS", x.report.id, x.plan.id, { reject: "Not done" })}</td></tr>`).join("")}
      </tbody></table></details>` : "");
  }).catch((error) => { overdueBox.innerHTML = `<p class="error" role="alert">${esc(error.message)}</p>`; });
  reviewButtons(overdueBox);
  const answeredBox = view.querySelector("#answered");
  api("/v1/questions/answered", { query: { as_of: asOfParam(), limit: 50 } }).then(({ answered }) => {
    if (stale()) return;
    answeredBox.innerHTML = answered.length ? answered.map((x) => `<article class="pair answered" data-question="${esc(x.question.id)}" tabindex="0" aria-label="answered question">
      <header><span>answered ${esc(when(x.answered_at))}</span>${x.review ? " " + badge(x.review, x.review) : ""}</header>
      <div class="sides">${side(x.question)}<div class="vs" aria-hidden="true">←</div>${side(x.answer)}</div>
      <footer class="review">${reviewControls("ANSWERS", x.answer.id, x.question.id, { reject: "Reopen" })}</footer></article>`).join("")
      : '<p class="muted" id="no-answered">No answered questions.</p>';
  }).catch((error) => { answeredBox.innerHTML = `<p class="error" role="alert">${esc(error.message)}</p>`; });
  reviewButtons(answeredBox);
  view.querySelectorAll("details[data-blocks]").forEach((d) => d.addEventListener("toggle", async () => {
    const ul = d.querySelector("ul");
    if (!d.open || ul.childElementCount) return;
    for (const id of d.dataset.blocks.split(",")) {
      const node = await api(`/v1/nodes/${encodeURIComponent(id)}`).catch(() => null);
      ul.insertAdjacentHTML("beforeend", `<li>${esc(node?.properties?.text || id)}<div class="review">${reviewControls("BLOCKS", d.dataset.question, id, { reject: "Not held up by it" })}</div></li>`);
    }
  }));
  reviewButtons(view.querySelector("#questions"));
  rowKeys(view.querySelector("#questions"), "tr[data-id]", (row) => { const d = row.querySelector("details"); if (d) d.open = !d.open; });
}

// ---- timeline -----------------------------------------------------------------------------------
const timelineView = { subject: localStorage.getItem("epigraph.subject") || "" };

async function timeline(view, { query, stale }) {
  if (query.get("subject")) timelineView.subject = query.get("subject");
  const subject = timelineView.subject;
  view.innerHTML = `<h1>Timeline</h1>
    <form class="controls" id="tform"><label>subject <input id="subject" value="${esc(subject)}" placeholder="an entity: Atlas, a person, a document"></label>
    <button type="submit">Show</button><span class="muted">${settings.asOf == null ? "standing now" : "standing as of " + esc(when(settings.asOf))} · oldest first</span></form>
    <div id="entries">${subject ? '<p class="muted">loading…</p>' : '<p class="muted">Name a subject to see what was true when.</p>'}</div>`;
  view.querySelector("#tform").addEventListener("submit", (event) => {
    event.preventDefault();
    timelineView.subject = view.querySelector("#subject").value.trim();
    localStorage.setItem("epigraph.subject", timelineView.subject);
    go("timeline", { subject: timelineView.subject });
  });
  if (!subject) return;
  let body;
  try {
    body = await api("/v1/timeline", { query: { subject, as_of: asOfParam() } });
  } catch (error) {
    if (!stale()) view.querySelector("#entries").innerHTML = `<p class="error" role="alert">${esc(error.message)}</p>`;
    return;
  }
  if (stale()) return;
  const entries = view.querySelector("#entries");
  entries.innerHTML = `<p class="muted">${body.entities.map((e) => `<a href="#/entity?id=${encodeURIComponent(e.id)}">${esc(e.name)}</a> (${esc(e.kind)})`).join(", ")}</p>
    <ol class="timeline">${body.entries.map((m) => `<li data-id="${esc(m.id)}" data-standing="${esc(m.standing_as_of)}" tabindex="0">
      <time datetime="${m.t_valid ? new Date(m.t_valid).toISOString() : ""}">${esc(when(m.t_valid))}</time>
      ${badge(m.memory_type)} ${badge(m.standing_as_of, m.standing_as_of)}
      <p>${esc(m.text)}</p>${source(m)}
      ${(m.superseded_by || []).filter((e) => settings.asOf == null || e.t_valid == null || e.t_valid <= settings.asOf).map((e) => `<div class="review">superseded by <a href="#/priorities?node=${encodeURIComponent(e.id)}">${esc(e.id.slice(0, 12))}</a> ${esc(when(e.t_valid))} · ${reviewControls("SUPERSEDES", e.id, m.id)}</div>`).join("")}
    </li>`).join("")}</ol>${body.entries.length ? "" : '<p class="muted">Nothing known about it at that instant.</p>'}`;
  reviewButtons(entries);
  rowKeys(entries, "li[data-id]", null);
}

// ---- reviews ------------------------------------------------------------------------------------
async function reviewsPage(view, { stale }) {
  await loadReviews();
  if (stale()) return;
  if (reviews.available === false) {
    view.innerHTML = `<h1>Reviews</h1><p class="muted">This server does not take reviews yet (no <code>/v1/reviews</code>).</p>`;
    return;
  }
  view.innerHTML = `<h1>Reviews</h1>
    <p class="muted">Judgements of the system that an analyst confirmed or rejected. A rejected edge leaves the graph after the pipeline's next epoch; withdrawing a review brings it back.</p>
    ${reviews.error ? `<p class="error" role="alert">${esc(reviews.error)}</p>` : ""}
    <table class="list" id="reviews"><thead><tr><th>relation</th><th>from</th><th>to</th><th>verdict</th><th>reason</th><th>by</th><th>when</th><th></th></tr></thead><tbody>
    ${reviews.list.map((r) => `<tr data-review="${esc(r.relation + "|" + r.from + "|" + r.to)}"><td>${esc(r.relation)}</td>
      <td><a href="#/priorities?node=${encodeURIComponent(r.from)}">${esc(r.from.slice(0, 12))}</a></td><td><a href="#/priorities?node=${encodeURIComponent(r.to)}">${esc(r.to.slice(0, 12))}</a></td>
      <td>${badge(r.verdict, r.verdict === "reject" ? "rejected" : "confirmed")}</td><td>${esc(r.reason || "")}</td><td>${esc(r.by || "")}</td><td>${esc(when(r.at))}</td>
      <td><button type="button" data-act="withdraw" data-relation="${esc(r.relation)}" data-from="${esc(r.from)}" data-to="${esc(r.to)}">Withdraw</button></td></tr>`).join("")}
    </tbody></table>${reviews.list.length ? "" : '<p class="muted">No reviews yet.</p>'}`;
  reviewButtons(view.querySelector("#reviews"));
}

export const pages = { priorities, contradictions, questions, timeline, reviews: reviewsPage };
