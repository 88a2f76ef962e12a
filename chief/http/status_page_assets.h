// The status page's stylesheet and script, inlined into every page so that it
// loads nothing else (the machines it runs on may have no internet).
//
// The script reads the snapshot embedded in <script id="initial-status">,
// then /status every 2 s; it fills the elements status_page.cc renders (ids
// v-*, tasks-body, tasks-summary, plot, live) and marks <body> with
// data-plot-points (the points drawn) and data-live ("yes"/"no").
#ifndef PSTRAIN_CHIEF_HTTP_STATUS_PAGE_ASSETS_H_
#define PSTRAIN_CHIEF_HTTP_STATUS_PAGE_ASSETS_H_

namespace pstrain {

inline constexpr const char kStatusPageStyle[] = R"CSS(
:root {
  --bg: #f4f6f8; --card: #ffffff; --ink: #1f2933; --muted: #66788a; --line: #e3e8ee;
  --raw: #a5c3f5; --smooth: #1d4ed8;
}
* { box-sizing: border-box; }
body {
  margin: 0; background: var(--bg); color: var(--ink);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", "Liberation Sans", sans-serif;
}
header {
  background: #0f172a; color: #f8fafc; padding: 16px 32px;
  display: flex; align-items: center; gap: 14px; flex-wrap: wrap;
}
header h1 { font-size: 20px; font-weight: 650; margin: 0; letter-spacing: -0.01em; }
header h1 .brand { color: #94a3b8; font-weight: 500; }
.badge {
  font-size: 12px; font-weight: 600; padding: 2px 10px; border-radius: 999px;
  background: #1e293b; color: #cbd5e1; border: 1px solid #334155;
}
header .meta { color: #94a3b8; font-size: 13px; }
header .meta code { color: #e2e8f0; font-size: 12.5px; }
.live { margin-left: auto; font-size: 13px; color: #cbd5e1; display: flex; align-items: center; gap: 8px; }
.live::before { content: ""; width: 9px; height: 9px; border-radius: 50%; background: #64748b; }
body[data-live="yes"] .live::before { background: #22c55e; box-shadow: 0 0 0 3px rgba(34, 197, 94, 0.25); }
body[data-live="no"] .live::before { background: #ef4444; }
main { max-width: 1200px; margin: 22px auto 32px; padding: 0 32px; }
.stats { display: grid; grid-template-columns: repeat(4, minmax(0, 1fr)); gap: 12px; }
.stat { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 11px 16px 12px; }
.stat .label { font-size: 12px; font-weight: 600; letter-spacing: 0.05em; text-transform: uppercase; color: var(--muted); }
.stat .value { font-size: 26px; font-weight: 650; font-variant-numeric: tabular-nums; line-height: 1.25; }
.stat.minor .value { font-size: 19px; font-weight: 600; }
.panels { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 16px; margin-top: 16px; }
@media (max-width: 960px) {
  .panels { grid-template-columns: minmax(0, 1fr); }
  .stats { grid-template-columns: repeat(2, minmax(0, 1fr)); }
}
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 14px 18px 16px; }
.card h2 { font-size: 15px; font-weight: 650; margin: 0; }
.card-head { display: flex; align-items: baseline; gap: 12px; margin-bottom: 8px; }
.card-head .aside { margin-left: auto; font-size: 13px; color: var(--muted); }
.legend { display: inline-flex; align-items: center; gap: 6px; margin-left: 12px; }
.legend i { display: inline-block; width: 18px; height: 3px; border-radius: 2px; }
#plot { width: 100%; height: 360px; display: block; }
#plot text { font-size: 12px; fill: var(--muted); font-variant-numeric: tabular-nums; }
#plot .grid { stroke: var(--line); stroke-width: 1; }
#plot .axis { stroke: #c5cfd9; stroke-width: 1; }
#plot .raw { fill: none; stroke: var(--raw); stroke-width: 1.25; stroke-linejoin: round; }
#plot .smooth { fill: none; stroke: var(--smooth); stroke-width: 2.25; stroke-linejoin: round; stroke-linecap: round; }
#plot .last { fill: var(--smooth); stroke: #fff; stroke-width: 2; }
#plot text.last-label { fill: var(--smooth); font-weight: 650; }
#plot text.empty { font-size: 14px; }
table { width: 100%; border-collapse: collapse; }
th {
  text-align: left; font-size: 12px; font-weight: 600; letter-spacing: 0.05em; text-transform: uppercase;
  color: var(--muted); padding: 6px 8px; border-bottom: 1px solid var(--line);
}
td { padding: 10px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
tr:last-child td { border-bottom: none; }
td.name { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 14px; white-space: nowrap; }
td.detail { color: var(--muted); font-size: 14px; }
tr.state-dead td, tr.state-unreachable td { background: #fef6f6; }
.pill {
  display: inline-flex; align-items: center; gap: 6px; white-space: nowrap;
  padding: 1px 10px 1px 8px; border-radius: 999px; font-size: 13px; font-weight: 600;
}
.pill::before { content: ""; width: 8px; height: 8px; border-radius: 50%; background: currentColor; }
.pill.state-running { color: #15803d; background: #dcfce7; }
.pill.state-restoring { color: #b45309; background: #fef3c7; }
.pill.state-dead { color: #b91c1c; background: #fee2e2; }
.pill.state-unreachable { color: #9f1239; background: #ffe4e6; }
.pill.state-done { color: #475569; background: #e2e8f0; }
.pill.state-other { color: #475569; background: #f1f5f9; }
.none { color: var(--muted); padding: 12px 8px; }
noscript p { color: var(--muted); margin: 8px 0 0; }
)CSS";

inline constexpr const char kStatusPageScript[] = R"JS(
"use strict";
const STATES = ["running", "restoring", "dead", "unreachable", "done"];
const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";

function stateClass(s) { return "state-" + (STATES.includes(s) ? s : "other"); }
function isUp(s) { return s === "running" || s === "restoring"; }
function strip(s) { return s.includes(".") ? s.replace(/\.?0+$/, "") : s; }
// Like printf's %.<d>g, as the server writes numbers.
function sig(x, d) {
  if (x === null || x === undefined || !isFinite(x)) return "\u2013";
  if (x === 0) return "0";
  const e = Math.floor(Math.log10(Math.abs(x)));
  if (e < -4 || e >= d) {
    const [m, ex] = x.toExponential(d - 1).split("e");
    const n = parseInt(ex, 10);
    return strip(m) + "e" + (n < 0 ? "-" : "+") + String(Math.abs(n)).padStart(2, "0");
  }
  return strip(x.toFixed(Math.max(0, d - 1 - e)));
}
function grouped(x) {
  return (x === null || !isFinite(x)) ? "\u2013" : Math.round(x).toLocaleString("en-US");
}
function fixed1(x) { return (x === null || !isFinite(x)) ? "\u2013" : x.toFixed(1); }
function duration(s) {
  if (s === null || !isFinite(s) || s < 0) return "\u2013";
  s = Math.floor(s);
  const two = (n) => String(n).padStart(2, "0");
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m " + two(s % 60) + "s";
  if (s < 86400) return Math.floor(s / 3600) + "h " + two(Math.floor(s / 60) % 60) + "m";
  return Math.floor(s / 86400) + "d " + two(Math.floor(s / 3600) % 24) + "h";
}
function setText(id, text) { const el = $(id); if (el.textContent !== text) el.textContent = text; }

function renderFigures(s) {
  setText("v-model", s.model || "model");
  setText("v-mode", s.mode || "\u2013");
  setText("v-train_dir", s.train_dir || "\u2013");
  setText("v-uptime", duration(s.uptime_secs));
  setText("v-global_step", grouped(s.global_step));
  setText("v-loss", sig(s.loss, 4));
  setText("v-steps_per_sec", fixed1(s.steps_per_sec));
  setText("v-examples_per_sec", grouped(s.examples_per_sec));
  setText("v-learning_rate", sig(s.learning_rate, 3));
  setText("v-checkpoint", s.seconds_since_checkpoint === null ? "none yet" : duration(s.seconds_since_checkpoint) + " ago");
  setText("v-restores", grouped(s.restores));
  setText("v-stale", grouped(s.stale_gradients_dropped));
}

function renderTasks(s) {
  const tasks = s.tasks;
  const body = $("tasks-body");
  body.replaceChildren();
  for (const t of tasks) {
    const tr = document.createElement("tr");
    tr.className = "task " + stateClass(t.state);
    const name = tr.insertCell(); name.className = "name"; name.textContent = t.task;
    const pill = document.createElement("span");
    pill.className = "pill " + stateClass(t.state); pill.textContent = t.state;
    tr.insertCell().appendChild(pill);
    const detail = tr.insertCell(); detail.className = "detail"; detail.textContent = t.detail;
    body.appendChild(tr);
  }
  if (tasks.length === 0) {
    const td = body.insertRow().insertCell(); td.colSpan = 3; td.className = "none"; td.textContent = "No tasks reported yet.";
  }
  const unlistedUp = s.unlisted_workers_up || 0, unlisted = unlistedUp + (s.unlisted_workers_down || 0);
  if (unlisted > 0) {
    const tr = body.insertRow(); tr.className = "unlisted";
    const td = tr.insertCell(); td.colSpan = 3; td.className = "none";
    td.textContent = "and " + unlisted + " more workers (" + unlistedUp + " up)";
  }
  const total = tasks.length + unlisted;
  const up = tasks.filter((t) => isUp(t.state)).length + unlistedUp;
  setText("tasks-summary", total + " tasks \u00b7 " + up + " up \u00b7 " + (total - up) + " not up");
}

// A round step for about n ticks over [lo, hi].
function tickStep(lo, hi, n) {
  const raw = (hi - lo) / n;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  return [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw * 0.999);
}
// The multiples of step within [lo, hi].
function ticks(lo, hi, step) {
  const out = [];
  for (let i = Math.ceil(lo / step - 1e-9); i * step <= hi + step * 1e-9; i++) out.push(i * step);
  return out;
}

function el(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}

function drawPlot(history) {
  const svg = $("plot");
  const W = Math.max(320, Math.round(svg.getBoundingClientRect().width)), H = 360;
  svg.setAttribute("viewBox", "0 0 " + W + " " + H);
  svg.replaceChildren();
  const pts = history.filter((p) => p.loss !== null && isFinite(p.loss));
  document.body.dataset.plotPoints = String(pts.length);
  if (pts.length < 2) {
    svg.appendChild(el("text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "empty" }, "Waiting for loss values\u2026"));
    return;
  }
  const m = { l: 52, r: 30, t: 14, b: 40 };
  let x0 = pts[0].step, x1 = pts[pts.length - 1].step;
  if (x1 === x0) x1 = x0 + 1;
  let y0 = Math.min(...pts.map((p) => p.loss)), y1 = Math.max(...pts.map((p) => p.loss));
  if (y1 === y0) { y0 -= 0.5; y1 += 0.5; }
  // The y axis runs between round values that enclose every point.
  const ys = tickStep(y0, y1, 5);
  y0 = Math.floor(y0 / ys - 1e-9) * ys; y1 = Math.ceil(y1 / ys + 1e-9) * ys;
  const X = (v) => m.l + (v - x0) / (x1 - x0) * (W - m.l - m.r);
  const Y = (v) => H - m.b - (v - y0) / (y1 - y0) * (H - m.t - m.b);

  for (const v of ticks(y0, y1, ys)) {
    svg.appendChild(el("line", { class: "grid", x1: m.l, x2: W - m.r, y1: Y(v), y2: Y(v) }));
    svg.appendChild(el("text", { x: m.l - 8, y: Y(v) + 4, "text-anchor": "end" }, sig(v, 3)));
  }
  for (const v of ticks(x0, x1, tickStep(x0, x1, Math.max(2, Math.floor((W - m.l - m.r) / 110))))) {
    svg.appendChild(el("line", { class: "axis", x1: X(v), x2: X(v), y1: H - m.b, y2: H - m.b + 5 }));
    svg.appendChild(el("text", { x: X(v), y: H - m.b + 19, "text-anchor": "middle" }, grouped(v)));
  }
  svg.appendChild(el("line", { class: "axis", x1: m.l, x2: W - m.r, y1: H - m.b, y2: H - m.b }));
  svg.appendChild(el("text", { x: W - m.r, y: H - 4, "text-anchor": "end" }, "global step"));

  const path = (vals) => vals.map((p, i) => (i ? "L" : "M") + X(p.step).toFixed(1) + " " + Y(p.loss).toFixed(1)).join("");
  // TensorBoard's smoothing: a debiased exponential moving average.
  let ema = 0, weight = 0;
  const smooth = pts.map((p) => { ema = 0.9 * ema + 0.1 * p.loss; weight = 0.9 * weight + 0.1; return { step: p.step, loss: ema / weight }; });
  svg.appendChild(el("path", { id: "loss-raw", class: "raw", d: path(pts) }));
  svg.appendChild(el("path", { id: "loss-smooth", class: "smooth", d: path(smooth) }));
  const last = smooth[smooth.length - 1];
  svg.appendChild(el("circle", { class: "last", cx: X(last.step), cy: Y(last.loss), r: 4.5 }));
  svg.appendChild(el("text", { class: "last-label", x: X(last.step) - 8, y: Y(last.loss) - 10, "text-anchor": "end" }, sig(last.loss, 4)));
}

let current = JSON.parse($("initial-status").textContent);
function render(s) { current = s; renderFigures(s); renderTasks(s); drawPlot(s.loss_history); }

async function refresh() {
  try {
    const r = await fetch("/status", { cache: "no-store" });
    if (!r.ok) throw new Error("HTTP " + r.status);
    render(await r.json());
    document.body.dataset.live = "yes";
    setText("live", "live \u00b7 updated " + new Date().toLocaleTimeString("en-GB"));
  } catch (e) {
    document.body.dataset.live = "no";
    setText("live", "cannot reach the chief \u00b7 retrying");
  }
}

render(current);
document.body.dataset.live = "yes";
setText("live", "live");
window.addEventListener("resize", () => drawPlot(current.loss_history));
setInterval(refresh, 2000);
)JS";

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_HTTP_STATUS_PAGE_ASSETS_H_
