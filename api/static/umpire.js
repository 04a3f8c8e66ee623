// tableref umpire page: live feed, rulings (WebSocket), score, squidge-off, squop graph, two-tap distance,
// the umpire's corrections (stored in the game's log; play goes on from them).
"use strict";
(() => {
  const COLORS = ["blue", "green", "red", "yellow"];
  const HALF_L = 914.4, HALF_W = 457.2;  // mat half length / width in mm (TW 3)
  const params = new URLSearchParams(location.search);
  let token = params.get("token") || sessionStorage.getItem("tableref-token");
  const $ = (sel) => document.querySelector(sel);
  let gameId = params.get("game");
  let state = null, game = null, ws = null, wsBackoff = 500, lastSeq = 0, selected = [];
  let refreshTimer = null, lastShotSeq = 0;

  function headers() { return token ? { Authorization: "Bearer " + token } : {}; }
  async function getJSON(url) {
    const r = await fetch(url, { headers: headers() });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(body.detail || r.statusText);
    return body;
  }
  async function postJSON(url, payload) {
    const r = await fetch(url, { method: "POST", headers: { ...headers(), "Content-Type": "application/json" },
      body: JSON.stringify(payload) });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) {
      const detail = Array.isArray(body.detail) ? body.detail.map((d) => d.msg || String(d)).join("; ") : body.detail;
      throw new Error(`${r.status} ${body.error || ""}: ${detail || r.statusText}`);
    }
    return body;
  }
  function el(tag, attrs = {}, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k === "class") e.className = v; else if (k === "text") e.textContent = v; else e.setAttribute(k, v);
    }
    for (const k of kids) e.append(k);
    return e;
  }
  function swatch(color) { return el("span", { class: "swatch", style: `background:var(--${color})` }); }

  // --- games -------------------------------------------------------------------------------------------------
  async function loadGames() {
    const games = await getJSON("/v1/games");
    const sel = $("#game-select");
    sel.innerHTML = "";
    for (const g of games) sel.append(el("option", { value: g.id, text: `${g.id} (${g.game}, ${g.game_type})` }));
    if (!gameId && games.length) {
      const active = games.filter((g) => g.source);
      gameId = (active.length ? active[active.length - 1] : games[games.length - 1]).id;
    }
    if (gameId) sel.value = gameId;
    sel.onchange = () => { params.set("game", sel.value); location.search = params.toString(); };
    if (!gameId) { $("#source-status").textContent = "no games yet"; setTimeout(loadGames, 2000); return; }
    startGame();
  }

  function startGame() {
    $("#feed").src = `/v1/games/${encodeURIComponent(gameId)}/feed.mjpg` + (token ? `?token=${encodeURIComponent(token)}` : "");
    connectWS();
    loadShots();
    refresh();
    refreshTimer = setInterval(refresh, 2000);
  }

  async function refresh() {
    try {
      const body = await getJSON(`/v1/games/${encodeURIComponent(gameId)}?recent=0`);
      game = body.game; state = body.state;
      renderStatus(body.source_status);
      renderScore(body.summary);
      renderSquidge(state && state.squidge_off);
      renderPot(state && state.pot);
      renderWinks();
      renderGraph();
    } catch (e) { $("#source-status").textContent = "error: " + e.message; }
  }

  // --- live rulings ------------------------------------------------------------------------------------------
  function connectWS() {
    const proto = location.protocol === "https:" ? "wss" : "ws";
    let url = `${proto}://${location.host}/v1/games/${encodeURIComponent(gameId)}/ws?after=${lastSeq}`;
    if (token) url += "&token=" + encodeURIComponent(token);
    ws = new WebSocket(url);
    ws.onopen = () => { wsBackoff = 500; setBadge("#ws-status", "live", "rulings: live"); if (lastShotSeq) loadShots(); };
    ws.onmessage = (ev) => {
      const msg = JSON.parse(ev.data);
      if (msg.type === "ruling") addRuling(msg);
      else if (msg.type === "shot") addShot(msg);
      else if (msg.type === "analysis") refresh();
      else if (msg.type === "status") renderStatus(msg.status);
    };
    ws.onclose = () => {
      setBadge("#ws-status", "reconnecting", `rulings: reconnecting in ${(wsBackoff / 1000).toFixed(1)} s`);
      setTimeout(connectWS, wsBackoff);
      wsBackoff = Math.min(wsBackoff * 2, 15000);
    };
  }

  function addRuling(item) {
    if (item.seq <= lastSeq) return;
    lastSeq = item.seq;
    const r = item.ruling || {};
    const pieces = r.piece_ids || r.pieces || [];
    const li = el("li", { class: "ruling new", "data-seq": String(item.seq) },
      el("span", { class: "cite", text: r.rule || r.clause || "?" }), " ",
      el("span", { class: "decision", text: String(r.decision || r.ruling || "") }), " ",
      el("span", { text: pieces.length ? pieces.join(", ") : "" }));
    const text = r.explanation || r.reason || r.message;
    if (text) li.append(el("div", { text }));
    if (r.evidence && typeof r.evidence === "object") {
      const ev = Object.entries(r.evidence).map(([k, v]) => `${k}=${typeof v === "number" ? v.toFixed(2) : v}`);
      li.append(el("div", { class: "evidence", text: ev.join("  ") }));
    }
    if (item.frame_idx !== null && item.frame_idx !== undefined)
      li.append(el("div", { class: "evidence", text: `frame ${item.frame_idx}` }));
    $("#rulings").prepend(li);
    $("#ruling-count").textContent = `(${lastSeq})`;
    setTimeout(() => li.classList.remove("new"), 2000);
  }

  // --- shot-by-shot log (tiddlywinks) ------------------------------------------------------------------------
  async function loadShots() {
    try {
      const shots = await getJSON(`/v1/games/${encodeURIComponent(gameId)}/shots?after=${lastShotSeq}`);
      for (const s of shots) addShot(s);
    } catch (e) { /* the rulings panel and status badge say what is wrong */ }
  }

  function addShot(s) {  // newest first: shot number, colour, what moved, its rulings
    if (s.seq <= lastShotSeq) return;
    lastShotSeq = s.seq;
    const li = el("li", { class: "shot new", "data-seq": String(s.seq), value: String(s.seq) });
    const rep = s.report || {};
    if (s.kind === "start") li.append(el("b", { text: "game start" }), ` ${(s.state || {}).due || ""} due`);
    else if (s.kind === "correction") {
      const c = s.correction || {};
      li.append(el("b", { text: "correction" }), " " + Object.entries(c).map(([k, v]) => `${k}=${v}`).join(" "));
    } else if (s.kind === "rest_error") li.append(el("b", { text: "unreadable rest" }), " " + (s.error || ""));
    else {
      if (rep.kind && rep.kind !== "shot") li.append(el("b", { text: String(rep.kind).replace(/_/g, " ") }), " ");
      else li.append(el("b", { text: `shot ${rep.shot ?? "?"}` }), " ");
      if (rep.color) li.append(swatch(rep.color), ` ${rep.color} `);
      if (rep.played_wink) li.append(el("span", { text: `played ${rep.played_wink}` }));
      for (const key of ["moved", "potted", "out", "disturbed"]) {
        const ids = rep[key] || [];
        if (ids.length) li.append(el("div", { class: "evidence", text: `${key}: ${ids.join(", ")}` }));
      }
    }
    for (const r of s.rulings || [])
      li.append(el("div", { text: `${r.rule || "?"} ${r.decision || ""}` + (r.explanation ? ` — ${r.explanation}` : "") }));
    const sum = s.summary;
    if (sum) li.append(el("div", { class: "evidence", text: `next: ${sum.due} (${sum.shots_left} shot${sum.shots_left === 1 ? "" : "s"})` }));
    $("#shots").prepend(li);
    $("#shot-count").textContent = `(${lastShotSeq})`;
    setTimeout(() => li.classList.remove("new"), 2000);
  }

  // --- panels ------------------------------------------------------------------------------------------------
  function setBadge(sel, cls, text) { const b = $(sel); b.className = "badge " + cls; b.textContent = text; }
  function renderStatus(s) {
    if (!s) return;
    let text = `source: ${s.state}`;
    if (s.detail) text += ` — ${s.detail}`;
    if (s.state === "reconnecting" && s.retry_in_s) text += ` (attempt ${s.attempts}, retry in ${s.retry_in_s.toFixed(1)} s)`;
    if (s.state === "live") text += s.at_rest ? (s.overlay ? " · at rest, analysed" : " · at rest, analysing") : " · moving";
    if (s.last_error) text += ` · last error: ${s.last_error}`;
    setBadge("#source-status", s.state, text);
  }

  function renderScore(summary) {
    const tbody = $("#score tbody");
    tbody.innerHTML = "";
    if (!summary) return;
    $("#score-source").textContent = summary.source ? `(${summary.source})` : "";
    const players = (game && game.players) || {};
    for (const c of COLORS) {
      const t = summary.tiddlies ? summary.tiddlies[c] : "";
      const p = summary.points ? summary.points[c] : "";
      tbody.append(el("tr", { "data-color": c }, el("td", {}, swatch(c), c), el("td", { text: players[c] || "" }),
        el("td", { class: "tiddlies", text: String(t ?? "") }), el("td", { text: String(p ?? "") })));
    }
    const parts = summary.partnerships || {};
    $("#partnerships").textContent = Object.entries(parts).map(([k, v]) => `${k}: ${v}`).join("   ");
  }

  function renderSquidge(v) {
    const box = $("#squidge");
    if (!v) { box.innerHTML = "<em>No verdict yet.</em>"; return; }
    box.innerHTML = "";
    if (v.resquidge) box.append(el("div", { class: "decision", text: "Re-squidge" + (v.reason ? `: ${v.reason}` : "") }));
    else if (v.winner) box.append(el("div", { class: "decision" }, "Winner: ", swatch(v.winner), String(v.winner)));
    const ranking = v.ranking || [];
    if (ranking.length) {
      const ol = el("ol");
      for (const r of ranking) {
        const label = typeof r === "object" ? `${r.color || ""} ${r.id || r.wink_id || ""} ` +
          (r.distance_mm !== undefined ? `${Number(r.distance_mm).toFixed(1)} mm` : "") : String(r);
        ol.append(el("li", { text: label }));
      }
      box.append(ol);
    }
    if (v.rule) box.append(el("span", { class: "cite", text: v.rule }));
  }

  function renderPot(pot) {  // TW 5(c): the potted counts the camera cannot make are the umpire's
    const box = $("#pot");
    if (!pot) { box.innerHTML = "<em>No photograph yet.</em>"; return; }
    box.innerHTML = "";
    if (pot.hides_color)
      box.append(el("div", {}, swatch(pot.hides_color),
        `inside is ${pot.hides_color}: ${pot.hides_color} winks in it cannot be told from its wall; count them`));
    const may = (pot.may_hide || []).filter((c) => c !== pot.hides_color);
    if (may.length) {
      const row = el("div", {}, "may hide a wink: ");
      for (const c of may) row.append(swatch(c), `${c} `);
      box.append(row);
    }
    if (typeof pot.floor_hidden_share === "number")
      box.append(el("div", { class: "evidence",
        text: `${Math.round(100 * pot.floor_hidden_share)} % of the cup's floor is out of the camera's view` }));
    if (!box.childElementCount) box.append(el("em", { text: "No colour is said to be hidden in the pot." }));
  }

  function pieces() { return (state && Array.isArray(state.pieces)) ? state.pieces : []; }

  function renderWinks() {
    const box = $("#winks");
    box.innerHTML = "";
    for (const p of pieces()) {
      if (p.unplayed) continue;
      const where = p.potted ? "potted" : p.off_mat ? "off the mat" : p.out_of_bounds ? "out of bounds" : "";
      const chip = el("button", { class: "chip" + (p.out_of_bounds ? " oob" : "") + (p.potted || p.off_mat ? " away" : "") +
        (selected.includes(p.id) ? " sel" : ""), "data-id": p.id, title: where }, swatch(p.color), p.id);
      chip.onclick = () => tap(p.id);
      box.append(chip);
    }
    renderCorrect();
  }

  // --- the umpire's corrections ------------------------------------------------------------------------------
  function renderCorrect() {
    const box = $("#correct-winks");
    const byId = Object.fromEntries(pieces().map((p) => [p.id, p]));
    const ids = selected.filter((id) => byId[id]);
    box.innerHTML = "";
    if (!ids.length) {
      box.append(el("em", { text: "Tap one wink to mark it potted or off the mat, two for a squop." }));
      return;
    }
    const act = (label, payload) => {
      const b = el("button", { class: "act", text: label });
      b.onclick = () => sendCorrection(payload, label);
      return b;
    };
    const [a, b] = ids;
    box.append(act(`${a} potted`, { kind: "wink", id: a, potted: true }),
      act(`${a} off the mat`, { kind: "wink", id: a, off_mat: true }));
    if (byId[a].potted || byId[a].off_mat)
      box.append(act(`${a} back in play`, { kind: "wink", id: a, potted: false, off_mat: false }));
    if (b) box.append(act(`${a} on ${b}`, { kind: "squop", upper: a, lower: b }),
      act(`${b} on ${a}`, { kind: "squop", upper: b, lower: a }),
      act(`${a} / ${b} not squopped`, { kind: "unsquop", upper: a, lower: b }),
      act(`${b} / ${a} not squopped`, { kind: "unsquop", upper: b, lower: a }));
  }

  function setupCorrect() {
    const sel = $("#correct-color");
    for (const c of COLORS) sel.append(el("option", { value: c, text: c }));
    $("#correct-turn").onclick = () => sendCorrection(
      { kind: "turn", color: sel.value, shots_left: Number($("#correct-shots").value) }, `${sel.value} due`);
    $("#correct-pass").onclick = () => sendCorrection({ kind: "pass" }, "pass");
    if (!token) $("#correct-token").hidden = false;
    $("#token-input").onchange = (ev) => {
      token = ev.target.value.trim() || null;
      if (token) sessionStorage.setItem("tableref-token", token); else sessionStorage.removeItem("tableref-token");
    };
  }

  async function sendCorrection(payload, label) {
    const status = $("#correct-status");
    status.className = "evidence";
    status.textContent = `sending: ${label}…`;
    try {
      const rec = await postJSON(`/v1/games/${encodeURIComponent(gameId)}/corrections`, payload);
      const sum = rec.summary || {};
      status.textContent = `stored (log #${rec.seq}): ${label}` + (sum.due ? `; next: ${sum.due} (${sum.shots_left} shot` +
        `${sum.shots_left === 1 ? "" : "s"})` : "");
      addShot(rec);
      selected = [];
      refresh();
    } catch (e) {
      status.className = "evidence error";
      status.textContent = `refused: ${label} — ${e.message}`;
      if (String(e.message).startsWith("401") || String(e.message).startsWith("403")) $("#correct-token").hidden = false;
    }
  }

  // Squop graph: arrows from the upper (squopping) wink to the one it squops, laid out pile by pile.
  function renderGraph() {
    const svg = $("#squop-graph");
    const squops = (state && state.squops) || [];
    const byId = Object.fromEntries(pieces().map((p) => [p.id, p]));
    const piles = ((state && state.piles) || []).filter((p) => p.length > 1);
    const ns = "http://www.w3.org/2000/svg";
    svg.innerHTML = `<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6"
      orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#ddd"/></marker></defs>`;
    if (!squops.length) {
      const t = document.createElementNS(ns, "text");
      t.setAttribute("x", 160); t.setAttribute("y", 110); t.setAttribute("text-anchor", "middle");
      t.setAttribute("fill", "#9aa3ad"); t.textContent = "no squops";
      svg.append(t); return;
    }
    const groups = piles.length ? piles : [Array.from(new Set(squops.flat()))];
    const pos = {};
    const cols = Math.ceil(Math.sqrt(groups.length)), rows = Math.ceil(groups.length / cols);
    groups.forEach((ids, gi) => {
      const cx = (gi % cols + 0.5) * 320 / cols, cy = (Math.floor(gi / cols) + 0.5) * 220 / rows;
      const rad = Math.min(320 / cols, 220 / rows) / 2 - 22;
      ids.forEach((id, k) => {
        const a = 2 * Math.PI * k / ids.length - Math.PI / 2;
        pos[id] = ids.length === 1 ? [cx, cy] : [cx + rad * Math.cos(a), cy + rad * Math.sin(a)];
      });
    });
    for (const [up, low] of squops) {
      if (!pos[up] || !pos[low]) continue;
      const [x1, y1] = pos[up], [x2, y2] = pos[low];
      const d = Math.hypot(x2 - x1, y2 - y1) || 1, r = 12;
      const line = document.createElementNS(ns, "line");
      line.setAttribute("x1", x1 + (x2 - x1) * r / d); line.setAttribute("y1", y1 + (y2 - y1) * r / d);
      line.setAttribute("x2", x2 - (x2 - x1) * r / d); line.setAttribute("y2", y2 - (y2 - y1) * r / d);
      line.setAttribute("stroke", "#ddd"); line.setAttribute("marker-end", "url(#arrow)");
      svg.append(line);
    }
    for (const [id, [x, y]] of Object.entries(pos)) {
      const c = document.createElementNS(ns, "circle");
      c.setAttribute("cx", x); c.setAttribute("cy", y); c.setAttribute("r", 10);
      c.setAttribute("fill", `var(--${(byId[id] && byId[id].color) || "muted"})`);
      c.setAttribute("class", "node"); c.setAttribute("data-id", id);
      const t = document.createElementNS(ns, "text");
      t.setAttribute("x", x); t.setAttribute("y", y + 21); t.setAttribute("text-anchor", "middle");
      t.setAttribute("font-size", "9"); t.setAttribute("fill", "#e8e8e8"); t.textContent = id;
      svg.append(c, t);
    }
  }

  // --- two-tap distance ----------------------------------------------------------------------------------------
  function solve(A, b) {  // Gaussian elimination with partial pivoting
    const n = b.length;
    for (let i = 0; i < n; i++) {
      let m = i;
      for (let r = i + 1; r < n; r++) if (Math.abs(A[r][i]) > Math.abs(A[m][i])) m = r;
      [A[i], A[m]] = [A[m], A[i]]; [b[i], b[m]] = [b[m], b[i]];
      for (let r = i + 1; r < n; r++) {
        const f = A[r][i] / A[i][i];
        for (let c = i; c < n; c++) A[r][c] -= f * A[i][c];
        b[r] -= f * b[i];
      }
    }
    const x = new Array(n).fill(0);
    for (let i = n - 1; i >= 0; i--) {
      let s = b[i];
      for (let c = i + 1; c < n; c++) s -= A[i][c] * x[c];
      x[i] = s / A[i][i];
    }
    return x;
  }
  function homographyMmToPx(cornersPx) {  // mat corners order (-x,+y), (+x,+y), (+x,-y), (-x,-y)
    const mm = [[-HALF_L, HALF_W], [HALF_L, HALF_W], [HALF_L, -HALF_W], [-HALF_L, -HALF_W]];
    const A = [], b = [];
    for (let i = 0; i < 4; i++) {
      const [x, y] = mm[i], [u, v] = cornersPx[i];
      A.push([x, y, 1, 0, 0, 0, -u * x, -u * y]); b.push(u);
      A.push([0, 0, 0, x, y, 1, -v * x, -v * y]); b.push(v);
    }
    const h = solve(A, b);
    return ([x, y]) => { const w = h[6] * x + h[7] * y + 1; return [(h[0] * x + h[1] * y + h[2]) / w, (h[3] * x + h[4] * y + h[5]) / w]; };
  }
  function piecePx(p, H) { return p.center_px ? p.center_px : (H ? H(p.center_mm) : null); }

  $("#feed").addEventListener("click", (ev) => {
    if (!state || !state.mat || !state.mat.corners_px) return;
    const img = ev.currentTarget, rect = img.getBoundingClientRect();
    const size = (state.image && state.image.size_wh_px) || [img.naturalWidth, img.naturalHeight];
    const x = (ev.clientX - rect.left) / rect.width * size[0], y = (ev.clientY - rect.top) / rect.height * size[1];
    const H = homographyMmToPx(state.mat.corners_px);
    let best = null, bestD = Infinity;
    for (const p of pieces()) {
      if (p.potted || p.off_mat) continue;
      const q = piecePx(p, H);
      if (!q) continue;
      const d = Math.hypot(q[0] - x, q[1] - y);
      if (d < bestD) { bestD = d; best = p; }
    }
    if (best && bestD < size[0] / 25) tap(best.id);
  });

  async function tap(id) {
    if (selected.includes(id)) selected = selected.filter((s) => s !== id); else selected.push(id);
    if (selected.length > 2) selected = selected.slice(-2);
    renderWinks();
    const box = $("#distance");
    if (selected.length < 2) { box.textContent = selected.length ? `Selected ${selected[0]}; tap another wink.` : "No winks selected."; return; }
    try {
      const [a, b] = selected;
      const d = await getJSON(`/v1/games/${encodeURIComponent(gameId)}/distance?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`);
      box.textContent = `${a} ↔ ${b}: centres ${d.center_distance_mm.toFixed(1)} mm, gap ${d.gap_mm.toFixed(1)} mm` +
        (d.gap_mm < 0 ? " (overlapping)" : "");
    } catch (e) { box.textContent = "distance: " + e.message; }
  }

  setupCorrect();
  loadGames().catch((e) => { $("#source-status").textContent = "error: " + e.message; });
})();
