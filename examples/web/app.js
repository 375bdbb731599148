// The page's script: plain ES modules in the browser, the SDK served by the example's server.
// Requests go to this page's own origin; its server proxies them to qes and adds the token.
import { createClient, microsToIso, QesApiError } from "/sdk/index.js";

const qes = createClient({ baseUrl: location.origin, timeoutMs: 20_000 });

const SERIES = [
  { key: "total_rest_requests", label: "rest", color: "#1f6feb" },
  { key: "total_storage_requests", label: "storage", color: "#2da44e" },
  { key: "total_auth_requests", label: "auth", color: "#bf8700" },
  { key: "total_realtime_requests", label: "realtime", color: "#8250df" },
];
const DEFAULT_SQL = `select id, timestamp, event_message
from edge_logs
where regexp_contains(event_message, 'GET')
order by timestamp desc
limit 50`;

const $ = (id) => document.getElementById(id);
const projectInput = $("project");
const intervalSelect = $("interval");
const sqlInput = $("sql");

function describe(e) {
  if (e instanceof QesApiError) {
    const at = e.line !== undefined ? ` (line ${e.line}, column ${e.column})` : "";
    const param = e.param ? ` [${e.param}${e.allowed ? `: ${e.allowed.join(", ")}` : ""}]` : "";
    return `${e.code}: ${e.message}${at}${param}`;
  }
  return e instanceof Error ? e.message : String(e);
}

function setStatus(el, text, isError = false) {
  el.textContent = text;
  el.classList.toggle("error", isError);
}

// ------------------------------------------------------------------------------------------ chart

let chartRequest;
async function loadChart() {
  chartRequest?.abort(); // a newer choice replaces a pending one
  const controller = new AbortController();
  chartRequest = controller;
  setStatus($("chart-status"), "loading…");
  try {
    const { rows } = await qes.usageApiCounts(
      { project: projectInput.value.trim(), interval: intervalSelect.value },
      { signal: controller.signal },
    );
    drawChart(rows);
    const total = rows.reduce((n, r) => n + SERIES.reduce((m, s) => m + r[s.key], 0), 0);
    setStatus($("chart-status"), `${rows.length} buckets, ${total} requests`);
  } catch (e) {
    if (controller.signal.aborted) return;
    drawChart([]);
    setStatus($("chart-status"), describe(e), true);
  }
}

function drawChart(rows) {
  const W = 1000;
  const H = 240;
  const pad = { left: 44, right: 10, top: 10, bottom: 28 };
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("width", "100%");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "requests per bucket");
  const el = (name, attrs, text) => {
    const node = document.createElementNS(ns, name);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    svg.appendChild(node);
    return node;
  };
  const totals = rows.map((r) => SERIES.reduce((n, s) => n + r[s.key], 0));
  const max = Math.max(1, ...totals);
  const plotW = W - pad.left - pad.right;
  const plotH = H - pad.top - pad.bottom;
  el("line", {
    x1: pad.left,
    y1: pad.top + plotH,
    x2: W - pad.right,
    y2: pad.top + plotH,
    stroke: "#c9ced6",
  });
  el("text", { x: pad.left - 6, y: pad.top + 10, "text-anchor": "end" }, String(max));
  el("text", { x: pad.left - 6, y: pad.top + plotH, "text-anchor": "end" }, "0");
  if (rows.length === 0) {
    el("text", { x: W / 2, y: H / 2, "text-anchor": "middle" }, "no requests in this window");
  }
  const slot = plotW / Math.max(rows.length, 1);
  const barW = Math.max(1, Math.min(40, slot * 0.8));
  rows.forEach((row, i) => {
    const x = pad.left + i * slot + (slot - barW) / 2;
    let y = pad.top + plotH;
    for (const s of SERIES) {
      const h = (row[s.key] / max) * plotH;
      if (h <= 0) continue;
      y -= h;
      const rect = el("rect", { x, y, width: barW, height: h, fill: s.color, "data-series": s.label });
      const title = document.createElementNS(ns, "title");
      title.textContent = `${row.timestamp} ${s.label}: ${row[s.key]}`;
      rect.appendChild(title);
    }
    const every = Math.ceil(rows.length / 8);
    if (i % every === 0) {
      const label =
        intervalSelect.value === "daily" ? row.timestamp.slice(5, 10) : row.timestamp.slice(11, 16);
      el("text", { x: x + barW / 2, y: H - 8, "text-anchor": "middle" }, label);
    }
  });
  $("chart").replaceChildren(svg);
}

// ----------------------------------------------------------------------------------------- search

async function search(event) {
  event?.preventDefault();
  const button = $("search-button");
  button.disabled = true;
  setStatus($("search-status"), "searching…");
  try {
    const { rows, rowLimitReached } = await qes.logsAll(
      { project: projectInput.value.trim() },
      { sql: sqlInput.value },
    );
    const body = $("results").querySelector("tbody");
    body.replaceChildren(
      ...rows.map((r) => {
        const tr = document.createElement("tr");
        const cells = [
          typeof r.timestamp === "number" ? microsToIso(r.timestamp) : String(r.timestamp ?? ""),
          r.event_message ?? JSON.stringify(r),
          r.id ?? "",
        ];
        cells.forEach((text, i) => {
          const td = document.createElement("td");
          td.textContent = text;
          if (i !== 1) td.className = "mono";
          tr.appendChild(td);
        });
        return tr;
      }),
    );
    setStatus(
      $("search-status"),
      `${rows.length} rows${rowLimitReached ? " (cut at the endpoint's row limit)" : ""}`,
    );
  } catch (e) {
    $("results").querySelector("tbody").replaceChildren();
    setStatus($("search-status"), describe(e), true);
  } finally {
    button.disabled = false;
  }
}

// ------------------------------------------------------------------------------------------- start

$("legend").replaceChildren(
  ...SERIES.map((s) => {
    const span = document.createElement("span");
    span.style.setProperty("--c", s.color);
    span.textContent = s.label;
    return span;
  }),
);
sqlInput.value = DEFAULT_SQL;
$("search-form").addEventListener("submit", search);
intervalSelect.addEventListener("change", loadChart);
projectInput.addEventListener("change", loadChart);

const config = await fetch("/config.json").then((r) => r.json());
projectInput.value = config.project;
await loadChart();
document.body.dataset.ready = "true";
