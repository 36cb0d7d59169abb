// The entity page: names and aliases, identity links (SAME_AS), relations, the memory objects
// around it and its neighbourhood drawn with Cytoscape.js (vendored, loaded as a classic script).
import { api, asOfParam, day, esc, go, review, reviewOf, settings } from "./app.js";

const entityView = { name: localStorage.getItem("epigraph.entity") || "" };
const EDGE_COLOURS = {
  CONTRADICTS: "#c0392b", SUPERSEDES: "#d68910", SUPPORTS: "#1e8449", ANSWERS: "#2874a6",
  BLOCKS: "#8e44ad", IMPLEMENTS: "#117a65", SAME_AS: "#555", MENTIONS: "#aab", DERIVED_FROM: "#ccd",
};
const label = (n) => {
  const p = n.properties || {};
  const claim = n.labels.includes("Claim") ? [p.attribute, p.value].filter(Boolean).join(" = ") : null;
  const text = p.name || (n.labels.includes("Memory") ? p.text : null) || claim || p.title || p.text || p.source_id || n.id;
  return text.length > 40 ? text.slice(0, 38) + "…" : text;
};
const kind = (n) => n.labels.filter((l) => l !== "Node").join(":");

export async function entityPage(view, { query, stale }) {
  if (query.get("name")) entityView.name = query.get("name");
  const id = query.get("id");
  view.innerHTML = `<h1>Entity</h1>
    <form class="controls" id="eform"><label>name or alias <input id="ename" value="${esc(entityView.name)}" placeholder="Atlas, Lighthouse Fund, a person"></label>
    <button type="submit">Find</button></form><div id="ebody"></div>`;
  view.querySelector("#eform").addEventListener("submit", (event) => {
    event.preventDefault();
    entityView.name = view.querySelector("#ename").value.trim();
    localStorage.setItem("epigraph.entity", entityView.name);
    go("entity", { name: entityView.name });
  });
  const body = view.querySelector("#ebody");
  let name = entityView.name;
  if (id && !query.get("name")) {
    const node = await api(`/v1/nodes/${encodeURIComponent(id)}`).catch(() => null);
    name = node?.properties?.name || name;
  }
  if (!name) { body.innerHTML = `<p class="muted">Name an entity.</p>`; return; }
  const { entities } = await api("/v1/entities", { query: { name, limit: 10, as_of: asOfParam() } });
  if (stale()) return;
  if (!entities.length) { body.innerHTML = `<p class="muted">No entity is known by ${esc(name)}.</p>`; return; }
  const entity = entities.find((e) => e.id === id || e.merged.includes(id)) || entities[0];
  // Older servers answer merged ids only: show those without evidence.
  const links = entity.identity_links ?? entity.merged.map((m) => ({ id: m, name: null, evidence: [] }));
  body.innerHTML = `
    ${entities.length > 1 ? `<p class="muted small">also: ${entities.filter((e) => e !== entity).map((e) => `<a href="#/entity?id=${encodeURIComponent(e.id)}&name=${encodeURIComponent(e.name)}">${esc(e.name)}</a> (${esc(e.kind)})`).join(", ")}</p>` : ""}
    <div class="split">
    <section aria-labelledby="ename-h"><h2 id="ename-h">${esc(entity.name)} <span class="badge">${esc(entity.kind)}</span></h2>
    <dl class="edges"><dt>aliases</dt><dd id="aliases">${entity.aliases.map(esc).join(", ") || '<span class="muted">none</span>'}</dd>
    ${entity.addresses.length ? `<dt>addresses</dt><dd>${entity.addresses.map(esc).join(", ")}</dd>` : ""}
    <dt>mentions</dt><dd>${entity.mentions ?? 0}</dd>
    <dt>same as</dt><dd id="same-as">${links.length ? `<ul class="plain identity">${links.map((l) => `<li class="merged" data-merged="${esc(l.id)}"><strong>${esc(l.name || l.id)}</strong> <code class="small">${esc(l.id.slice(0, 12))}</code> ${reviewOf("SAME_AS", l.id, entity.id)?.verdict === "reject" ? '<span class="badge rejected" data-review="reject">split requested</span>' : `<button type="button" class="unmerge" data-merged="${esc(l.id)}" title="an identity verdict: these are different entities">Not the same</button>`}
      ${l.evidence.length ? `<ul class="evidence small">${l.evidence.map((e) => `<li>${esc(e)}</li>`).join("")}</ul>` : '<div class="muted small">no evidence recorded (written before evidence was kept)</div>'}</li>`).join("")}</ul><span class="muted small">Merged by identity resolution (SAME_AS), with the evidence that linked each; "Not the same" records a reviewer\'s verdict and splits them at the pipeline\'s next epoch.</span>` : '<span class="muted">no identity links</span>'}</dd></dl>
    <h3>Relations</h3>${settings.asOf != null ? '<p class="note">Valid as of the chosen instant.</p>' : '<p class="muted small">An ended relation shows its end date ("now reports to …", "left …").</p>'}
    <table class="list" id="relations"><thead><tr><th>relation</th><th>with</th><th>since</th><th>sources</th></tr></thead><tbody>
    ${entity.relations.map((r) => `<tr${r.t_invalid && r.t_invalid <= (settings.asOf ?? Date.now()) ? ' class="ended"' : ""}><td>${r.direction === "out" ? "→" : "←"} ${esc(r.type)}</td><td><a href="#/entity?id=${encodeURIComponent(r.id)}&name=${encodeURIComponent(r.name || "")}">${esc(r.name || r.id)}</a></td>
      <td>${esc(day(r.t_valid))}${r.t_invalid ? " – " + esc(day(r.t_invalid)) : ""}</td><td class="num">${r.support ?? ""}</td></tr>`).join("")}
    </tbody></table>${entity.relations.length ? "" : '<p class="muted">No relations.</p>'}
    <h3>Memory objects around it</h3><ul id="mentions" class="plain"><li class="muted">loading…</li></ul>
    <p><a href="#/timeline?subject=${encodeURIComponent(entity.name)}">Its timeline →</a></p></section>
    <section aria-labelledby="graph-h"><h2 id="graph-h">Neighbourhood <span class="muted small">2 hops</span></h2>
    <div id="graph" role="img" aria-label="neighbourhood graph of ${esc(entity.name)}"></div>
    <p id="edge-why" class="small" aria-live="polite"><span class="muted">Point at an edge to see why it was drawn.</span></p>
    <p class="legend small">${Object.entries(EDGE_COLOURS).map(([t, c]) => `<span><i style="background:${c}"></i>${t}</span>`).join(" ")}</p></section></div>`;
  body.querySelector("#same-as").addEventListener("click", async (event) => {
    const button = event.target.closest("button.unmerge");
    if (!button) return;
    button.disabled = true;
    try {
      await review("SAME_AS", button.dataset.merged, entity.id, "reject", "not the same entity (workspace)");
      button.replaceWith(Object.assign(document.createElement("span"), { className: "badge rejected", textContent: "split requested" }));
    } catch (error) {
      button.disabled = false;
      button.insertAdjacentHTML("afterend", ` <span class="error" role="alert">${esc(error.message)}</span>`);
    }
  });
  const graph = await api(`/v1/nodes/${encodeURIComponent(entity.id)}/neighborhood`, { query: { hops: 2, limit: 80 } });
  if (stale()) return;
  const memories = graph.nodes.filter((n) => n.labels.includes("Memory"));
  body.querySelector("#mentions").innerHTML = memories.length
    ? memories.slice(0, 30).map((n) => `<li><a href="#/priorities?node=${encodeURIComponent(n.id)}">${esc(n.properties.type || "")}</a> ${esc(n.properties.text || n.id)}</li>`).join("")
    : '<li class="muted">none within two hops</li>';
  const container = body.querySelector("#graph");
  container.dataset.nodes = graph.nodes.length;
  container.dataset.edges = graph.edges.length;
  if (typeof window.cytoscape !== "function") {
    container.textContent = "Cytoscape.js did not load.";
    return;
  }
  const ids = new Set(graph.nodes.map((n) => n.id));
  const cy = window.cytoscape({
    container,
    elements: [
      ...graph.nodes.map((n) => ({ data: { id: n.id, label: label(n), kind: kind(n), centre: n.id === entity.id ? 1 : 0, memory: n.labels.includes("Memory") ? 1 : 0 } })),
      ...graph.edges.filter((e) => ids.has(e.from) && ids.has(e.to)).map((e, i) => ({ data: { id: "e" + i, source: e.from, target: e.to, type: e.type, colour: EDGE_COLOURS[e.type] || "#999", why: (e.properties?.evidence || []).join("; ") } })),
    ],
    style: [
      { selector: "node", style: { label: "data(label)", "font-size": 9, "text-wrap": "ellipsis", "text-max-width": 120, "background-color": "#5b7db1", width: 14, height: 14, color: "#222" } },
      { selector: "node[memory = 1]", style: { "background-color": "#e0a526", shape: "round-rectangle" } },
      { selector: "node[centre = 1]", style: { "background-color": "#c0392b", width: 24, height: 24, "font-weight": "bold" } },
      { selector: "edge", style: { width: 1.5, "line-color": "data(colour)", "target-arrow-color": "data(colour)", "target-arrow-shape": "triangle", "curve-style": "bezier", label: "data(type)", "font-size": 7, color: "#666" } },
    ],
    layout: { name: "cose", animate: false, randomize: false, nodeRepulsion: 9000 },
  });
  cy.on("tap", "node", (event) => {
    const n = graph.nodes.find((x) => x.id === event.target.id());
    if (!n) return;
    if (n.labels.includes("Entity")) go("entity", { id: n.id, name: n.properties.name || "" });
    else if (n.labels.includes("Memory")) go("priorities", { node: n.id });
  });
  // An edge's reason (Relation::evidence: a citation's cue, the values two claims disagree on,
  // the identity evidence of a merge), on hover or tap.
  const why = body.querySelector("#edge-why");
  const names = new Map(graph.nodes.map((n) => [n.id, label(n)]));
  const explain = (event) => {
    const d = event.target.data();
    why.innerHTML = `<strong>${esc(d.type)}</strong> ${esc(names.get(d.source) || d.source)} → ${esc(names.get(d.target) || d.target)}: ` +
      (d.why ? esc(d.why) : '<span class="muted">no reason recorded (a structural edge, or written before reasons were kept)</span>');
    why.dataset.edge = d.type;
  };
  cy.on("mouseover tap", "edge", explain);
  container.cy = cy; // for the browser test and the console
  container.dataset.reasons = graph.edges.filter((e) => (e.properties?.evidence || []).length).length;
  container.dataset.drawn = cy.nodes().length;
  return () => cy.destroy();
}
