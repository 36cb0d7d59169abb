// Proposals: governed writes waiting for a decision, and what became of the others
// (GET /v1/proposals; POST /v1/proposals/{id}/approve|reject|withdraw). See docs/governance.md.
import { api, esc, when, ago, go } from "./app.js";

const badge = (text, cls = "") => `<span class="badge ${cls}">${esc(text)}</span>`;
const STATE_CLASS = { proposed: "open", approved: "open", applied: "confirmed", conflicted: "warn", rejected: "rejected", withdrawn: "superseded" };
const view = { state: localStorage.getItem("epigraph.proposals") || "open" };

/** What the change does, in a line. */
function summary(change) {
  switch (change.kind) {
    case "remember":
      return `remember ${badge(change.memory_type)} ${esc(change.text)}${(change.links || []).map((l) => ` <span class="muted">${esc(l.relation)} → ${esc(l.to.slice(0, 12))}</span>`).join("")}`;
    case "edit":
      return `edit <a href="#/priorities?node=${encodeURIComponent(change.node)}">${esc(change.node.slice(0, 12))}</a>`;
    case "judgement":
      return `${esc(change.verdict)} ${esc(change.relation)} <a href="#/priorities?node=${encodeURIComponent(change.from)}">${esc(change.from.slice(0, 12))}</a> → <a href="#/priorities?node=${encodeURIComponent(change.to)}">${esc(change.to.slice(0, 12))}</a>`;
    default:
      return esc(JSON.stringify(change));
  }
}

const value = (v) => (v == null ? '<span class="muted">–</span>' : esc(typeof v === "string" ? v : JSON.stringify(v)));

function diffTable(diff, label = "before") {
  const rows = Object.entries(diff || {});
  if (!rows.length) return "";
  return `<table class="diff"><thead><tr><th>field</th><th>${label}</th><th>after</th></tr></thead><tbody>
    ${rows.map(([field, [before, after]]) => `<tr><td>${esc(field)}</td><td>${value(before)}</td><td>${value(after)}</td></tr>`).join("")}</tbody></table>`;
}

function history(p) {
  return `<ol class="history">${p.history.map((r) => `<li>${badge(r.step, STATE_CLASS[r.step] || "")} ${esc(when(r.at))} by ${esc(r.by)}${r.reason ? ` — ${esc(r.reason)}` : ""}
    ${r.effects ? `<span class="muted">published ${r.effects.map(esc).join(", ")}</span>` : ""}
    ${r.changed ? `<div>what moved since it was proposed:${diffTable(r.changed, "expected")}</div>` : ""}</li>`).join("")}</ol>`;
}

function row(p) {
  const proposal = p.proposal;
  const who = proposal.proposer;
  const open = p.state === "proposed" || p.state === "approved";
  const window = proposal.window.mode === "delay" ? `applies ${proposal.due_at > Date.now() ? "in " + Math.ceil((proposal.due_at - Date.now()) / 1000) + " s" : "now"} unless rejected`
    : proposal.window.mode === "approval" ? "waits for approval" : "immediate";
  return `<article class="proposal" data-id="${esc(p.id)}" data-state="${esc(p.state)}" tabindex="0">
    <header>${badge(p.state, STATE_CLASS[p.state] || "")} <span>${summary(proposal.change)}</span></header>
    <p class="muted small">${esc(who.kind)} <b>${esc(who.identity)}</b>${who.agent ? " · agent " + esc(who.agent) : ""}${who.model ? " · model " + esc(who.model) : ""} · ${esc(ago(p.history[0].at))} · ${esc(window)}</p>
    ${proposal.why ? `<p>why: ${esc(proposal.why)}</p>` : ""}
    ${diffTable(proposal.diff)}
    ${proposal.read && proposal.read.length ? `<p class="muted small">read: ${proposal.read.map((r) => esc(r.id.slice(0, 12)) + (r.version ? "@" + esc(r.version.slice(0, 8)) : "")).join(", ")}</p>` : ""}
    <details><summary>history (${p.history.length})</summary>${history(p)}</details>
    ${open ? `<div class="decide"><label>reason <input class="reason" placeholder="why (kept in the history)"></label>
      <button type="button" data-act="approve">Approve</button> <button type="button" data-act="reject">Reject</button> <button type="button" data-act="withdraw">Withdraw</button>
      <span class="error" role="alert"></span></div>` : ""}
  </article>`;
}

export async function proposalsPage(root, { stale }) {
  let body;
  try {
    body = await api("/v1/proposals", { query: { limit: 200 } });
  } catch (error) {
    if (stale()) return;
    root.innerHTML = `<h1>Proposals</h1><p class="${error.status === 404 ? "muted" : "error"}" role="alert">${esc(error.status === 404 ? "This server takes no proposals yet." : error.message)}</p>`;
    return;
  }
  if (stale()) return;
  const all = body.proposals || [];
  const shown = view.state === "open" ? all.filter((p) => p.state === "proposed" || p.state === "approved") : all;
  root.innerHTML = `<h1>Proposals</h1>
    <p class="muted">Changes agents and people proposed to memory: notes, edits, verdicts on judgements. The server computed each diff; applying checks it again and refuses a stale one (conflicted). See docs/governance.md.</p>
    <div class="controls"><label>show <select id="pstate"><option value="open"${view.state === "open" ? " selected" : ""}>waiting (${all.filter((p) => p.state === "proposed" || p.state === "approved").length})</option>
      <option value="all"${view.state === "all" ? " selected" : ""}>all (${all.length})</option></select></label></div>
    <div id="proposals">${shown.map(row).join("") || '<p class="muted">Nothing waiting.</p>'}</div>`;
  root.querySelector("#pstate").addEventListener("change", (event) => {
    view.state = event.target.value;
    localStorage.setItem("epigraph.proposals", view.state);
    go("proposals");
  });
  for (const button of root.querySelectorAll("article.proposal button[data-act]")) {
    button.addEventListener("click", async () => {
      const article = button.closest("article");
      const reason = article.querySelector("input.reason").value.trim() || undefined;
      const alert = article.querySelector(".decide .error");
      for (const b of article.querySelectorAll("button")) b.disabled = true;
      try {
        const after = await api(`/v1/proposals/${encodeURIComponent(article.dataset.id)}/${button.dataset.act}`, { method: "POST", body: { reason } });
        article.outerHTML = row(after);
      } catch (error) {
        alert.textContent = error.message;
        for (const b of article.querySelectorAll("button")) b.disabled = false;
      }
    });
  }
}
