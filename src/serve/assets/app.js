// The gpu16 playground's script: the editor, the controls and the views of the machine.
// Every action is one request to the server's JSON API (docs/playground.md), which runs
// the same debugger session as `gpu16 debug --json`; what the server is running, and how
// far it has come, arrives live as server-sent events (`GET /api/events`).
"use strict";

const $ = (id) => document.getElementById(id);
const SOURCE = "program.s";
const ui = {
  opened: false,          // a session is open for the editor's current text
  openedText: null,
  breakpoints: new Map(), // line -> session breakpoint number (null until opened)
  state: null,            // the last state
  prevRegs: null,         // registers of the state before
  prevMemory: null,       // memory of the state before
  initialMemory: null,    // memory at cycle 0
  run: null,              // the whole run (events, stats)
  zoom: 8,                // pixels a cycle
  selectedRow: 0,
  busy: false,
  diags: [],
};

async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const r = await fetch(path, opts);
  const v = await r.json().catch(() => ({ error: "bad reply" }));
  if (!r.ok && !v.error) v.error = "HTTP " + r.status;
  return v;
}

function setStatus(text, isError) {
  const s = $("status");
  s.textContent = text;
  s.classList.toggle("error", !!isError);
}

// ---- live updates -------------------------------------------------------------------

// The server's events: `busy` when a command or a program's whole run begins, `progress`
// every quarter second while it runs, `idle` when it ends. EventSource reconnects by
// itself, and the server sends a new stream where it stands.
function listen() {
  const es = new EventSource("/api/events");
  const on = (kind, f) => es.addEventListener(kind, (e) => f(JSON.parse(e.data)));
  on("busy", (v) => showLive(v, null));
  on("progress", (v) => showLive(v, v));
  on("idle", () => showLive(null, null));
}

function showLive(busy, progress) {
  const l = $("live");
  $("stop").classList.toggle("armed", !!busy);
  if (!busy) { l.hidden = true; delete l.dataset.cycle; l.dataset.what = ""; return; }
  l.hidden = false;
  l.dataset.what = busy.what;
  const what = busy.what === "open" ? "the whole run" : busy.what;
  if (!progress) { l.textContent = `${what}…`; return; }
  const secs = (progress.elapsed_ms / 1000).toFixed(1);
  if (progress.cycle == null) { l.textContent = `${what}: ${secs} s`; return; }
  l.dataset.cycle = progress.cycle;
  l.textContent = `${what}: cycle ${progress.cycle.toLocaleString("en")}, ` +
    `${progress.instructions.toLocaleString("en")} instructions, ${secs} s`;
}

// ---- the editor --------------------------------------------------------------------

function lineCount() { return $("editor").value.split("\n").length; }

function renderGutter() {
  const g = $("gutter");
  const n = lineCount();
  const byLine = new Map();
  for (const d of ui.diags) {
    if (d.line == null) continue;
    const prev = byLine.get(d.line);
    if (!prev || d.severity === "error") byLine.set(d.line, d);
  }
  const ips = new Map(); // line -> cores
  if (ui.state && ui.state.regs && ui.state.regs.cores) {
    for (const c of ui.state.regs.cores) {
      if (c.location && c.state !== "idle") {
        const l = c.location.line;
        if (!ips.has(l)) ips.set(l, []);
        ips.get(l).push(c.core);
      }
    }
  }
  const parts = [];
  for (let i = 1; i <= n; i++) {
    const cls = ["ln"];
    if (ui.breakpoints.has(i)) cls.push("bp");
    const d = byLine.get(i);
    if (d) cls.push(d.severity === "error" ? "err" : "warn");
    let mark = "";
    if (ips.has(i)) {
      cls.push("ip");
      const cs = ips.get(i);
      mark = `<span class="cores" title="IP of core ${cs.join(", ")}">c${cs.length > 3 ? cs.slice(0, 3).join(",") + "…" : cs.join(",")}</span>`;
    }
    const title = d ? ` title="${escapeHtml(d.severity + ": " + d.message)}"` : "";
    parts.push(`<div class="${cls.join(" ")}" data-line="${i}"${title}>${mark}${i}</div>`);
  }
  g.innerHTML = parts.join("");
  g.scrollTop = $("editor").scrollTop;
}

function escapeHtml(s) {
  return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));
}

function caretLine() {
  const e = $("editor");
  return e.value.slice(0, e.selectionStart).split("\n").length;
}

function showCaretMessage() {
  const line = caretLine();
  const here = ui.diags.filter((d) => d.line === line);
  const m = $("caret-msg");
  if (here.length) {
    const d = here.find((x) => x.severity === "error") || here[0];
    m.textContent = `line ${line}:${d.column}: ${d.severity}: ${d.message}`;
    m.className = d.severity;
  } else {
    m.textContent = `line ${line}`;
    m.className = "";
  }
}

function renderDiagnostics() {
  const ul = $("diagnostics");
  ul.innerHTML = "";
  for (const d of ui.diags) {
    const li = document.createElement("li");
    li.className = "diag " + d.severity;
    li.dataset.line = d.line == null ? "" : d.line;
    li.textContent = `${d.line == null ? d.file : SOURCE + ":" + d.line + ":" + d.column}: ${d.severity}: ${d.message}`;
    li.onclick = () => goToLine(d.line);
    ul.appendChild(li);
  }
  renderGutter();
  showCaretMessage();
}

function goToLine(line) {
  if (!line) return;
  const e = $("editor");
  const lines = e.value.split("\n");
  let pos = 0;
  for (let i = 0; i < line - 1 && i < lines.length; i++) pos += lines[i].length + 1;
  e.focus();
  e.setSelectionRange(pos, pos);
  showCaretMessage();
}

let assembleTimer = null;
let assembleSeq = 0;
function scheduleAssemble() {
  clearTimeout(assembleTimer);
  assembleTimer = setTimeout(assembleNow, 250);
}

async function assembleNow() {
  const seq = ++assembleSeq;
  const v = await api("POST", "/api/assemble", { source: $("editor").value, machine: machineChoices() });
  if (seq !== assembleSeq) return;
  if (v.error) { setStatus(v.error, true); return; }
  ui.diags = v.diagnostics || [];
  $("diagnostics").dataset.errors = v.errors;
  renderDiagnostics();
}

function setSource(text) {
  $("editor").value = text;
  ui.opened = false;
  ui.breakpoints.clear();
  renderGutter();
  scheduleAssemble();
}

// ---- breakpoints -------------------------------------------------------------------

async function toggleBreakpoint(line) {
  if (ui.breakpoints.has(line)) {
    const id = ui.breakpoints.get(line);
    ui.breakpoints.delete(line);
    if (ui.opened && id != null) await command(`delete ${id}`, false);
  } else {
    ui.breakpoints.set(line, null);
    if (ui.opened) {
      const v = await command(`break ${SOURCE}:${line}`, false);
      if (v && v.reply && v.reply.breakpoint != null) ui.breakpoints.set(line, v.reply.breakpoint);
      else ui.breakpoints.delete(line);
    }
  }
  renderGutter();
}

// ---- the session -------------------------------------------------------------------

function machineChoices() {
  const m = { backend: $("backend").value, dialect: $("dialect").value };
  if ($("timing").value.trim()) m.timing = $("timing").value.trim();
  if ($("max-cycles").value.trim()) m.max_cycles = $("max-cycles").value.trim();
  return m;
}

async function open() {
  setStatus("opening…");
  const text = $("editor").value;
  const v = await api("POST", "/api/open", { source: text, memory: $("memory").value, machine: machineChoices() });
  if (v.error && !v.diagnostics) { setStatus(v.error, true); return false; }
  if (!v.ok) {
    ui.diags = v.diagnostics || [];
    renderDiagnostics();
    setStatus(v.error || "the program cannot be opened", true);
    return false;
  }
  ui.opened = true;
  ui.openedText = text;
  ui.run = v.run;
  ui.prevRegs = null;
  ui.prevMemory = null;
  ui.initialMemory = v.state.memory;
  ui.state = null;
  const lines = [...ui.breakpoints.keys()];
  ui.breakpoints.clear();
  for (const line of lines) {
    const r = await api("POST", "/api/command", { line: `break ${SOURCE}:${line}` });
    if (r.reply && r.reply.breakpoint != null) ui.breakpoints.set(line, r.reply.breakpoint);
  }
  renderStats();
  showState(v.state, { event: "restart", cycle: 0 });
  return true;
}

async function ensureOpen() {
  if (ui.opened && ui.openedText === $("editor").value) return true;
  return open();
}

async function command(line, move = true) {
  if (move && !(await ensureOpen())) return null;
  if (ui.busy && move) return null;
  ui.busy = move || ui.busy;
  if (move) setStatus(`${line}…`);
  try {
    const v = await api("POST", "/api/command", { line });
    if (v.error) { setStatus(v.error, true); return v; }
    if (move || v.reply.event) showState(v.state, v.reply);
    return v;
  } finally {
    if (move) ui.busy = false;
  }
}

function describe(reply, state) {
  if (reply.error) return `cycle ${state.cycle}: ${reply.error}`;
  const back = reply.reverse ? " (back)" : "";
  const at = reply.location ? ` at ${SOURCE}:${reply.location.line}` : "";
  switch (reply.event) {
    case "break": return `cycle ${reply.cycle}: breakpoint ${reply.breakpoint}` + (reply.core != null ? `, core ${reply.core}${at}` : "") + back;
    case "watch": return `cycle ${reply.cycle}: byte ${reply.addr} ${reply.old} -> ${reply.new}, core ${reply.core}${at}`;
    case "step": return `cycle ${reply.cycle}: stepped${back}`;
    case "restart": return `cycle 0: at the start`;
    case "end": return `the program ended after ${reply.cycle} cycles`;
    case "fault": return `cycle ${reply.cycle}: ${reply.error ? reply.error.message || reply.error.rule : "fault"}`;
    default: return `cycle ${state.cycle}: ${state.status}`;
  }
}

function showState(state, reply) {
  if (ui.state) {
    ui.prevRegs = ui.state.regs;
    ui.prevMemory = ui.state.memory;
  }
  ui.state = state;
  const s = $("status");
  s.dataset.cycle = state.cycle;
  s.dataset.status = state.status;
  s.dataset.event = reply.event || (reply.error ? "error" : "");
  setStatus(describe(reply, state), !!reply.error || reply.event === "fault");
  renderCores();
  renderLocks();
  renderMemory();
  renderGutter();
  drawTimeline();
}

// ---- the machine -------------------------------------------------------------------

function stateText(c) {
  switch (c.state) {
    case "stalled": return `stalled on lock ${hex3(c.addr)} held by core ${c.holder} since ${c.since}`;
    case "not_started": return `starts at ${c.start}`;
    case "bank_conflict": return "bank conflict";
    default: return c.state;
  }
}

function hex3(a) { return "0x" + Number(a).toString(16).padStart(3, "0"); }
function hex2(b) { return Number(b).toString(16).padStart(2, "0"); }

function renderCores() {
  const t = $("cores");
  const cores = ui.state.regs.cores || [];
  let html = "<tr><th>core</th><th>state</th><th>frame</th><th>IP</th><th>line</th>";
  for (let r = 0; r < 16; r++) html += `<th>r${r}</th>`;
  html += "</tr>";
  for (const c of cores) {
    html += `<tr id="core-${c.core}"><td>${c.core}</td><td class="state state-${c.state}">${escapeHtml(stateText(c))}</td>`;
    html += `<td>${c.frame == null ? "" : c.frame}</td><td>${c.ip == null ? "" : c.ip}</td><td>${c.location ? c.location.line : ""}</td>`;
    const prev = ui.prevRegs && ui.prevRegs.cores ? ui.prevRegs.cores[c.core] : null;
    c.registers.forEach((v, r) => {
      const changed = prev && prev.registers[r] !== v ? " changed" : "";
      html += `<td id="reg-${c.core}-${r}" class="reg${changed}" data-value="${v}" title="r${r} = ${v} (0x${hex2(v)})">${v}</td>`;
    });
    html += "</tr>";
  }
  t.innerHTML = html;
}

function lockedAddrs() {
  const set = new Set();
  const l = ui.state.locks;
  if (l && l.locks) for (const k of l.locks) set.add(k.addr);
  return set;
}

function renderLocks() {
  const l = ui.state.locks;
  const div = $("locks");
  if (!l || l.error) { div.textContent = l ? l.error : "none"; return; }
  if (!l.locks.length) { div.textContent = "none held"; return; }
  div.innerHTML = l.locks.map((k) =>
    `<div class="lock">${hex3(k.addr)}: held by core ${k.holder} since cycle ${k.since}` +
    (k.waiting.length ? `; waiting: core ${k.waiting.join(", ")}` : "") + "</div>").join("");
}

function byte(hexText, addr) { return parseInt(hexText.substr(addr * 2, 2), 16); }

function renderMemory() {
  const mem = ui.state.memory || "";
  const init = ui.initialMemory || "";
  const prev = ui.prevMemory;
  const locked = lockedAddrs();
  const parts = ['<div class="hd">row</div>'];
  for (let b = 0; b < 16; b++) parts.push(`<div class="hd" title="bank ${b}">b${b.toString(16)}</div>`);
  for (let row = 0; row < 256; row++) {
    parts.push(`<div class="rn">${row}</div>`);
    for (let bank = 0; bank < 16; bank++) {
      const a = bank * 256 + row;
      const v = byte(mem, a);
      const cls = [v ? "nz" : "z"];
      if (init && byte(init, a) !== v) cls.push("written");
      if (prev && byte(prev, a) !== v) cls.push("changed");
      if (locked.has(a)) cls.push("locked");
      if (row === ui.selectedRow) cls.push("selrow");
      parts.push(`<div id="mem-${a}" class="${cls.join(" ")}" data-value="${v}" data-row="${row}" title="${hex3(a)} (bank ${bank}, row ${row}) = ${v}">${hex2(v)}</div>`);
    }
  }
  const grid = $("memory-grid");
  const scroll = grid.scrollTop;
  grid.innerHTML = parts.join("");
  grid.scrollTop = scroll;
  renderRow();
}

function renderRow() {
  if (!ui.state) return;
  const mem = ui.state.memory;
  const r = ui.selectedRow;
  const bytes = [];
  for (let bank = 0; bank < 16; bank++) bytes.push(hex2(byte(mem, bank * 256 + r)));
  $("row-view").textContent = `row ${r} (banks 0..f, addresses ${hex3(r)}, ${hex3(256 + r)}, … ${hex3(15 * 256 + r)}): ${bytes.join(" ")}`;
}

// ---- the timeline ------------------------------------------------------------------

const ROW_H = 11;
const TOP = 14;
const LEFT = 46;

function runCycles() {
  if (!ui.run) return 0;
  const c = ui.run.cycles != null ? ui.run.cycles : (ui.run.error && ui.run.error.cycle) || 0;
  return Math.max(1, c);
}

function drawTimeline() {
  const cv = $("timeline");
  const cycles = runCycles();
  const width = Math.min(32000, LEFT + Math.ceil((cycles + 1) * ui.zoom) + 10);
  cv.width = Math.max(width, $("timeline-box").clientWidth - 2);
  cv.height = TOP + 17 * ROW_H + 6;
  cv.dataset.zoom = ui.zoom;
  $("zoom-text").textContent = `${ui.zoom} px a cycle`;
  const g = cv.getContext("2d");
  g.clearRect(0, 0, cv.width, cv.height);
  g.font = "10px monospace";
  g.fillStyle = "#555";
  g.fillText("sched", 2, TOP + ROW_H - 2);
  for (let k = 0; k < 16; k++) g.fillText("core " + k, 2, TOP + (k + 2) * ROW_H - 2);
  const x = (c) => LEFT + c * ui.zoom;
  // Cycle ticks, only as far as the canvas reaches: a long run's cycles (billions) are
  // far more than its width can show, and a tick for each would hold the page for
  // minutes.
  const step = Math.max(1, Math.pow(10, Math.ceil(Math.log10(60 / ui.zoom))));
  const lastTick = Math.min(cycles, Math.ceil((cv.width - LEFT) / ui.zoom));
  g.fillStyle = "#999";
  for (let c = 0; c <= lastTick; c += step) {
    g.fillRect(x(c), TOP - 3, 1, 3);
    g.fillText(String(c), x(c) + 1, TOP - 4);
  }
  const events = ui.run ? ui.run.events || [] : [];
  const box = (c0, c1, row, color, h = ROW_H - 2, dy = 1) => {
    g.fillStyle = color;
    g.fillRect(x(c0), TOP + row * ROW_H + dy, Math.max(1, (c1 - c0) * ui.zoom), h);
  };
  for (const e of events) {
    switch (e.kind) {
      case "control_frame": box(e.cycle, e.cycle + 1, 0, "#888"); break;
      case "broadcast":
        box(e.from, e.to + 1, 0, "#9b6ad8");
        g.fillStyle = "#000"; g.fillRect(x(e.from), TOP, 1, ROW_H); // issue
        break;
      case "scheduler_wait": box(e.from, e.to, 0, "#eed060"); break;
      case "core_part": box(e.start, e.end + 1, e.core + 1, "#6a9ad8"); break;
      case "stall": box(e.from, e.to, e.core + 1, e.cause === "lock" ? "#d44" : "#e90", ROW_H - 5, 3); break;
      case "lock_held": box(e.from, e.to, e.core + 1, "#333", 2, ROW_H - 3); break;
    }
  }
  if (ui.state) {
    g.fillStyle = "#0a0";
    g.fillRect(x(Number(ui.state.cycle)), 0, 2, cv.height);
    cv.dataset.cursor = ui.state.cycle;
  }
  if (ui.run && ui.run.events_cut != null) {
    g.fillStyle = "#b00";
    g.fillText(`events shown up to cycle ${ui.run.events_cut}`, LEFT, cv.height - 2);
  }
}

function zoom(factor) {
  ui.zoom = Math.min(64, Math.max(1 / 64, ui.zoom * factor));
  drawTimeline();
}

async function timelineClick(ev) {
  if (!ui.state || !ui.opened) return;
  const rect = ev.target.getBoundingClientRect();
  const px = ev.clientX - rect.left;
  const target = Math.max(0, Math.floor((px - LEFT) / ui.zoom));
  await goToCycle(target);
}

async function goToCycle(target) {
  const now = Number(ui.state.cycle);
  if (target > now && ui.state.status === "paused") await command(`step ${target - now}`);
  else if (target < now) await command(`reverse-step ${now - target}`);
}

// ---- statistics --------------------------------------------------------------------

function renderStats() {
  const r = ui.run;
  const div = $("stats");
  if (!r) { div.textContent = ""; return; }
  let html = "<table><tr>";
  const top = [["cycles", r.cycles], ["instructions", r.instructions], ["stalls", r.stalls], ["backend", r.backend]];
  html += top.map(([k]) => `<th>${k}</th>`).join("") + "</tr><tr>";
  html += top.map(([k, v]) => `<td id="stat-${k}">${v == null ? "" : v}</td>`).join("") + "</tr></table>";
  if (r.error) html += `<p class="error">the run failed: ${escapeHtml(r.error.message || r.error.rule)}</p>`;
  if (r.cores) {
    html += "<table><tr><th>core</th><th>instructions</th><th>stalls</th><th>lock stalls</th><th>bank stalls</th><th>tasks</th></tr>";
    for (const c of r.cores) html += `<tr><td>${c.core}</td><td>${c.instructions}</td><td>${c.stalls}</td><td>${c.lock_stalls}</td><td>${c.bank_stalls}</td><td>${c.tasks}</td></tr>`;
    html += "</table>";
  }
  if (r.stats) html += `<details><summary>all statistics (run --json's "stats")</summary><pre>${escapeHtml(JSON.stringify(r.stats, null, 1))}</pre></details>`;
  div.innerHTML = html;
}

// ---- wiring ------------------------------------------------------------------------

async function loadExample(name) {
  const v = await api("GET", "/api/example?name=" + encodeURIComponent(name));
  if (v.error) { setStatus(v.error, true); return; }
  $("memory").value = v.memory || "";
  setSource(v.source);
}

async function init() {
  const e = $("editor");
  e.addEventListener("input", () => { renderGutter(); scheduleAssemble(); });
  e.addEventListener("scroll", () => { $("gutter").scrollTop = e.scrollTop; });
  for (const ev of ["click", "keyup", "select"]) e.addEventListener(ev, showCaretMessage);
  e.addEventListener("keydown", (ev) => {
    if (ev.key === "Tab") { ev.preventDefault(); document.execCommand("insertText", false, "    "); }
  });
  $("gutter").addEventListener("click", (ev) => {
    const ln = ev.target.closest(".ln");
    if (ln) toggleBreakpoint(Number(ln.dataset.line));
  });
  $("examples").addEventListener("change", (ev) => { if (ev.target.value) loadExample(ev.target.value); });
  $("load-file-btn").onclick = () => $("load-file").click();
  $("load-file").addEventListener("change", async (ev) => {
    const f = ev.target.files[0];
    if (f) setSource(await f.text());
  });
  $("save-file").onclick = () => {
    const a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([$("editor").value], { type: "text/plain" }));
    a.download = "program.s";
    a.click();
    URL.revokeObjectURL(a.href);
  };
  $("server-file").onclick = async () => {
    const v = await api("GET", "/api/file");
    if (v.error) setStatus(v.error, true); else setSource(v.source);
  };
  $("run").onclick = async () => { if (await open()) await command("continue"); };
  $("restart").onclick = () => command("run");
  $("step").onclick = () => command(`step ${Number($("step-n").value) || 1}`);
  $("continue").onclick = () => command("continue");
  $("rstep").onclick = () => command(`reverse-step ${Number($("step-n").value) || 1}`);
  $("rcontinue").onclick = () => command("reverse-continue");
  $("stop").onclick = () => api("POST", "/api/stop");
  $("zoom-in").onclick = () => zoom(2);
  $("zoom-out").onclick = () => zoom(0.5);
  $("timeline").addEventListener("click", timelineClick);
  $("memory-grid").addEventListener("click", (ev) => {
    const row = ev.target.dataset.row;
    if (row != null) { ui.selectedRow = Number(row); renderMemory(); }
  });
  for (const id of ["backend", "dialect", "timing", "max-cycles", "memory"]) {
    $(id).addEventListener("change", () => { ui.opened = false; if (id === "dialect") scheduleAssemble(); });
  }
  listen();
  const list = await api("GET", "/api/examples");
  for (const x of list.examples || []) {
    const o = document.createElement("option");
    o.value = x.name;
    o.textContent = x.name + (x.memory ? " (with memory)" : "");
    $("examples").appendChild(o);
  }
  if (list.file) {
    $("server-file").hidden = false;
    const v = await api("GET", "/api/file");
    if (!v.error) { setSource(v.source); drawTimeline(); return; }
  }
  await loadExample("counter.s");
  drawTimeline();
}

init();
