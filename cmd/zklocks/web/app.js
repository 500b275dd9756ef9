// zklocks web: draws the state that zklocks web streams (server-sent
// events, one JSON state each) as SVG and as tables, and posts the
// actions with the run's token. Plain JavaScript, no build step.
"use strict";

const token = new URLSearchParams(location.search).get("token") || "";
const SVG = "http://www.w3.org/2000/svg";
const $ = (sel) => document.querySelector(sel);

// Figures the browser test reads: when the first picture was drawn
// (ms since navigation start), and for each event with a commit time, how
// long after its commit it was on the screen.
window.zk = { firstPictureMs: null, latencies: [], states: 0, lastEventId: 0, state: null };

function el(tag, attrs, text) {
  const e = document.createElementNS(tag.svg ? SVG : "http://www.w3.org/1999/xhtml", tag.name || tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}
const s = (name, attrs, text) => el({ svg: true, name }, attrs, text);

function showAlert(text) {
  const a = $("#alert");
  a.hidden = !text;
  a.textContent = text || "";
}

function short(session) { return session ? "…" + session.slice(-4) : "?"; }
function who(n) { return n.contender || ("session " + n.session); }

function render(st) {
  window.zk.state = st;
  window.zk.states++;
  $("#lockname").textContent = st.path + " (" + st.variant + ")";
  renderControls(st);
  renderPicture(st);
  renderTables(st);
  renderTimeline(st);
  const down = st.members.filter((m) => !m.up || m.error);
  const problems = [];
  if (st.error) problems.push(st.error);
  for (const m of down) {
    problems.push("member " + m.id + " (" + m.addr + ")" + (m.up ? ": " + m.error : " does not answer: " + (m.error || "down")));
  }
  showAlert(problems.join(" · "));
  $("#status").textContent = "live: " + st.queue.length + " node(s), " + st.waiters.length + " waiter(s) without a node; read at " + clock(st.read_at_ms);
  if (window.zk.firstPictureMs === null) {
    window.zk.firstPictureMs = performance.now();
    $("#picture").setAttribute("data-ready", "1");
  }
}

function renderControls(st) {
  const sel = $("#variant");
  if (sel.options.length !== st.variants.length) {
    sel.replaceChildren(...st.variants.map((v) => el("option", { value: v }, v)));
  }
  // Only a new variant moves the choice: a user's pick waits for its submit.
  if (sel.dataset.shown !== st.variant) {
    sel.value = st.variant;
    sel.dataset.shown = st.variant;
  }
  const why = [];
  for (const b of document.querySelectorAll("button[data-action]")) {
    const reason = st.disabled[b.dataset.action];
    b.disabled = !!reason;
    b.title = reason || "";
    if (reason && ["kill-leader", "cut", "heal", "freeze"].includes(b.dataset.action)) {
      why.push(b.textContent + ": " + reason);
    }
  }
  $("#why").replaceChildren(...why.map((t) => el("li", {}, t)));
}

const NODE_W = 150, NODE_H = 78, GAP = 22, X0 = 20, QY = 130, WY = 300;

function renderPicture(st) {
  const members = $("#members-layer"), nodes = $("#nodes-layer"), arrows = $("#arrows-layer");
  members.replaceChildren();
  st.members.forEach((m, i) => {
    const g = s("g", { class: "member", "data-member": m.id, "data-mode": m.mode || "" });
    const x = X0 + i * 200;
    const stroke = m.cut ? "#b00" : (m.mode === "leader" ? "#1a5fb4" : "#777");
    g.append(s("rect", { x, y: 10, width: 185, height: 70, rx: 6, fill: m.up && m.mode ? "#eef3fb" : "#ddd", stroke, "stroke-width": m.mode === "leader" ? 3 : 1.5, "stroke-dasharray": m.cut ? "6 3" : "none" }));
    g.append(s("text", { x: x + 8, y: 30 }, "member " + m.id + ": " + (m.up ? (m.mode || "not serving") : "down") + (m.cut ? " (cut off)" : "")));
    g.append(s("text", { x: x + 8, y: 48, class: "mono" }, "zxid " + (m.zxid || "-")));
    g.append(s("text", { x: x + 8, y: 66 }, (m.up ? m.connections : "-") + " connections"));
    members.append(g);
  });
  nodes.replaceChildren();
  arrows.replaceChildren();
  const pos = {};
  // A watch on the lock path itself (a queue's parent: the semaphore's
  // first waiter watches its children) points at a box of its own.
  const parent = st.path.slice(st.path.lastIndexOf("/") + 1);
  const onParent = st.queue.some((n) => n.watches.includes(parent) && n.node !== parent);
  if (onParent) {
    const g = s("g", { class: "parent", "data-node": parent });
    g.append(s("rect", { x: 640, y: 10, width: 240, height: 70, rx: 6, fill: "#f6f6f6", stroke: "#555", "stroke-dasharray": "2 2" }));
    g.append(s("text", { x: 648, y: 30 }, "the lock path " + parent));
    g.append(s("text", { x: 648, y: 48 }, "(its children: the queue)"));
    nodes.append(g);
    pos[parent] = { x: 640 + 120 - NODE_W / 2, y: 80 - NODE_H };
  }
  st.queue.forEach((n, i) => {
    const x = X0 + i * (NODE_W + GAP);
    pos[n.node] = { x, y: QY };
    const holds = n.role === "holds";
    const g = s("g", { class: "node", "data-node": n.node, "data-role": n.role, "data-contender": n.contender || "", "data-token": n.token, "data-watches": n.watches.join(",") });
    g.append(s("rect", { x, y: QY, width: NODE_W, height: NODE_H, rx: 6, fill: holds ? "#e3f4e1" : "white", stroke: holds ? "#26a269" : "#555", "stroke-width": holds ? 3 : 1.5 }));
    g.append(s("text", { x: x + 6, y: QY + 16 }, (holds ? "HOLDS " : "waits ") + who(n) + (n.kind === "reader" ? " (read)" : "")));
    g.append(s("text", { x: x + 6, y: QY + 32, class: "mono" }, n.seq !== null ? "seq " + n.seq : "the lock node"));
    g.append(s("text", { x: x + 6, y: QY + 48, class: "mono" }, "token " + n.token));
    g.append(s("text", { x: x + 6, y: QY + 64, class: "mono" }, "sess " + short(n.session) + (n.member ? " @m" + n.member : "")));
    nodes.append(g);
  });
  st.waiters.forEach((w, i) => {
    const x = X0 + i * (NODE_W + GAP);
    const g = s("g", { class: "waiter", "data-session": w.session, "data-contender": w.contender || "", "data-watches": w.watches.join(",") });
    g.append(s("rect", { x, y: WY, width: NODE_W, height: 48, rx: 24, fill: "#fff8ee", stroke: "#b35900", "stroke-dasharray": "4 3" }));
    g.append(s("text", { x: x + 12, y: WY + 20 }, "waits " + (w.contender || "session")));
    g.append(s("text", { x: x + 12, y: WY + 37, class: "mono" }, "sess " + short(w.session) + (w.member ? " @m" + w.member : "")));
    nodes.append(g);
    for (const target of w.watches) arrow(arrows, { x: x + NODE_W / 2, y: WY }, pos[target], w.contender || w.session, target, true);
  });
  st.queue.forEach((n) => {
    for (const target of n.watches) {
      const up = onParent && target === parent;
      const from = { x: pos[n.node].x + NODE_W / 2, y: up ? QY : QY + NODE_H };
      arrow(arrows, from, pos[target], n.contender || n.session, target, up);
    }
  });
  if (st.queue.length === 0 && st.waiters.length === 0) {
    nodes.append(s("text", { x: X0, y: QY + 30 }, "Nobody holds or waits: add a contender."));
  }
}

// arrow draws a watch: from a waiter to the node it watches.
function arrow(layer, from, to, label, target, up) {
  if (!to) return;
  const tx = to.x + NODE_W / 2, ty = up ? to.y + NODE_H : to.y + NODE_H;
  let d;
  if (up) {
    d = `M ${from.x} ${from.y} C ${from.x} ${from.y - 50}, ${tx} ${ty + 60}, ${tx} ${ty + 2}`;
  } else {
    const depth = 40 + Math.abs(from.x - tx) / 8;
    d = `M ${from.x} ${from.y} C ${from.x} ${from.y + depth}, ${tx} ${ty + depth}, ${tx + 8} ${ty + 2}`;
  }
  layer.append(s("path", { class: "arrow", d, fill: "none", stroke: "#b35900", "stroke-width": 2, "marker-end": "url(#arrowhead)", "data-from": label, "data-to": target }));
}

function renderTables(st) {
  $("#members-table tbody").replaceChildren(...st.members.map((m) => {
    const tr = el("tr", { "data-member": m.id });
    tr.append(el("th", { scope: "row" }, "member " + m.id + " (" + m.addr + ")"),
      el("td", {}, m.up ? (m.mode || "not serving") + (m.cut ? ", cut off" : "") : "down: " + (m.error || "")),
      el("td", { class: "mono" }, m.zxid || "-"), el("td", {}, m.up ? String(m.connections) : "-"));
    return tr;
  }));
  const rows = st.queue.map((n, i) => {
    const tr = el("tr", { "data-node": n.node, "data-role": n.role, "data-contender": n.contender || "", "data-token": n.token, "data-watches": n.watches.join(","), class: n.role });
    tr.append(el("th", { scope: "row" }, String(i)), el("td", {}, who(n)), el("td", { class: "mono" }, n.node),
      el("td", { class: "mono" }, n.session + (n.member ? " (member " + n.member + ")" : "")), el("td", { class: "mono" }, n.token),
      el("td", {}, (n.role === "holds" ? "holds the lock" : "waits") + (n.kind === "reader" ? " (reader)" : "")),
      el("td", { class: "mono" }, n.watches.length ? "→ " + n.watches.join(", ")
        : n.role === "waits" ? "none listed (a child watch on the queue? wchc lists data watches only)" : "—"));
    return tr;
  });
  for (const w of st.waiters) {
    const tr = el("tr", { "data-session": w.session, "data-contender": w.contender || "", "data-watches": w.watches.join(","), class: "waiter" });
    tr.append(el("th", { scope: "row" }, "–"), el("td", {}, w.contender || "session " + w.session), el("td", {}, "no node"),
      el("td", { class: "mono" }, w.session + (w.member ? " (member " + w.member + ")" : "")), el("td", {}, "—"),
      el("td", {}, "waits"), el("td", { class: "mono" }, "→ " + w.watches.join(", ")));
    rows.push(tr);
  }
  $("#queue-table tbody").replaceChildren(...rows);
  $("#contenders").replaceChildren(...st.contenders.map((c) => {
    const li = el("li", { "data-contender": c.name, "data-state": c.state });
    li.append(document.createTextNode(c.name + (c.kind === "process" ? " (child pid " + c.pid + ")" : "") + ": " + c.state + (c.session ? ", session " + c.session : "") + " "));
    const b = el("button", { "data-remove": c.name, "aria-label": "remove " + c.name }, "remove");
    b.addEventListener("click", () => post("remove", { contender: c.name }));
    li.append(b);
    return li;
  }));
  $("#store-summary").textContent = "highest token accepted: " + (st.store.max_token || "-") + "; value: " + JSON.stringify(st.store.value || "");
  $("#store-table tbody").replaceChildren(...(st.store.log || []).map((a) => {
    const tr = el("tr", { class: a.accepted ? "" : "refused", "data-accepted": a.accepted });
    tr.append(el("td", {}, a.writer), el("td", { class: "mono" }, a.token), el("td", {}, a.value), el("td", {}, a.accepted ? "accepted" : "REFUSED"));
    return tr;
  }));
}

function clock(ms) {
  const d = new Date(ms);
  return d.toTimeString().slice(0, 8) + "." + String(d.getMilliseconds()).padStart(3, "0");
}

// renderTimeline lists the events newest first, by the time each
// happened (a create's commit time, else when zklocks web learnt of it).
function renderTimeline(st) {
  const now = Date.now();
  for (const e of st.events) {
    if (e.id <= window.zk.lastEventId) continue;
    window.zk.lastEventId = e.id;
    if (e.commit_ms) window.zk.latencies.push({ kind: e.kind, node: e.node, ms: now - e.commit_ms });
  }
  const when = (e) => e.commit_ms || e.at_ms;
  const events = [...st.events].sort((a, b) => when(b) - when(a) || b.id - a.id);
  $("#timeline").replaceChildren(...events.map((e) => {
    const li = el("li", { "data-kind": e.kind, "data-id": e.id, "data-who": e.who || "" });
    li.append(el("span", { class: "t" }, clock(when(e)) + " "), el("span", { class: "k" }, e.kind),
      el("span", { class: "z" }, e.zxid ? "zxid " + e.zxid + " " : ""), document.createTextNode(e.text));
    return li;
  }));
}

async function post(action, body) {
  $("#result").textContent = action + "…";
  try {
    const r = await fetch("/api/" + action, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Zklocks-Token": token },
      body: JSON.stringify(body || {}),
    });
    const j = await r.json().catch(() => ({ error: r.status + " " + r.statusText }));
    $("#result").textContent = j.error ? action + " failed: " + j.error : j.ok;
    if (j.error) showAlert(action + " failed: " + j.error);
  } catch (err) {
    $("#result").textContent = action + " failed: " + err;
    showAlert("zklocks web does not answer (stopped?): " + err);
  }
}

function start() {
  for (const b of document.querySelectorAll("#controls .buttons button[data-action]")) {
    b.addEventListener("click", () => post(b.dataset.action));
  }
  $("#variant-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    post("variant", { variant: $("#variant").value });
  });
  if (!token) {
    showAlert("No token in the URL: open the URL that zklocks web printed (it ends with ?token=…).");
    return;
  }
  const es = new EventSource("/events?token=" + encodeURIComponent(token));
  es.onmessage = (m) => {
    try { render(JSON.parse(m.data)); } catch (err) { showAlert("could not draw the state: " + err); }
  };
  es.onerror = () => {
    $("#status").textContent = "disconnected";
    showAlert("Lost the connection to zklocks web: it has stopped, or the token is wrong. Start it again and open the URL it prints.");
    es.close();
  };
}
start();
