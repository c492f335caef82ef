/* Leaderboard: instant filter and sort of the server-rendered table (both kept in the URL),
   Chart.js charts with text alternatives, provider legend with colours and shapes, live refresh. */
(function () {
  "use strict";
  const tw = window.tw;
  const table = document.getElementById("lb-table");
  if (!table) return;
  const body = document.getElementById("lb-rows");
  const form = document.getElementById("lb-filters");
  const state = (window.twLeaderboard = { rows: tw.json("lb-data") || [], sort: null, dir: "asc", charts: {}, refreshes: 0, hidden: new Set(), trend: tw.json("lb-trend") || {} });
  const providers = tw.json("lb-providers") || [];
  const fixed = { model: "", provider: "", offering: "" };
  const pathMatch = location.pathname.match(/^\/(models|providers|offerings)\/([^/]+)\//);
  if (pathMatch) fixed[{ models: "model", providers: "provider", offerings: "offering" }[pathMatch[1]]] = decodeURIComponent(pathMatch[2]);

  // One colour and one shape per provider, from its place in the catalog's provider list (stable across pages):
  // 16 colours that stay apart on white (each at least 3:1 against it), 8 shapes on top.
  const PALETTE = ["#1f6fd1", "#d9480f", "#2b8a3e", "#c2255c", "#0c8599", "#7048e8", "#a0740a", "#5c940d", "#495057", "#a61e4d",
                   "#1864ab", "#e03131", "#087f5b", "#862e9c", "#8f5902", "#364fc7"];
  const SHAPES = [["circle", "●"], ["triangle", "▲"], ["rect", "■"], ["rectRot", "◆"], ["star", "✶"], ["crossRot", "✕"], ["cross", "✚"], ["rectRounded", "▢"]];
  // Trend lines: each line its own colour and dash, so two offerings of one provider never look alike.
  const DASHES = [[], [7, 4], [2, 3], [10, 3, 2, 3], [4, 4], [12, 5]];
  const look = (slug) => {
    let i = providers.indexOf(slug);
    if (i < 0) { i = 0; for (const ch of slug || "") i = (i * 31 + ch.charCodeAt(0)) >>> 0; }
    return { color: PALETTE[i % PALETTE.length], shape: SHAPES[i % SHAPES.length] };
  };
  const lineLook = (i) => ({ color: PALETTE[i % PALETTE.length], dash: DASHES[i % DASHES.length], shape: SHAPES[i % SHAPES.length] });
  const lbTexts = tw.json("lb-texts") || {};
  const t = (key, params) => (key in lbTexts ? String(lbTexts[key]).replace(/%\((\w+)\)s/g, (_, name) => (params && name in params ? params[name] : "")) : tw.t(key, params));
  // Outliers: an axis ends at 1.5 × the 90th percentile when a few values lie far beyond it; those are drawn
  // at the edge and named in a note, so two slow offerings no longer squash everyone else into a corner.
  const axisLimit = (values) => {
    const sorted = values.filter((v) => v != null && isFinite(v)).sort((a, b) => a - b);
    if (sorted.length < 5) return null;
    const p90 = sorted[Math.floor(0.9 * (sorted.length - 1))];
    const limit = p90 * 1.5;
    return sorted[sorted.length - 1] > limit ? limit : null;
  };
  const note = (id, text) => { const el = document.getElementById(id); if (el) { el.textContent = text || ""; el.hidden = !text; } };
  const paintDots = () => body.querySelectorAll("[data-provider-dot]").forEach((dot) => {
    const l = look(dot.dataset.providerDot);
    dot.textContent = l.shape[1]; dot.style.color = l.color; dot.classList.add("shape");
  });

  const filters = () => {
    const get = (name) => (form && form.elements[name] ? form.elements[name].value : "");
    return { q: get("q").trim().toLowerCase(), model: get("model") || fixed.model, provider: get("provider") || fixed.provider, param: get("param") };
  };
  const hasParam = (data, p) => !p || (Array.isArray(data.parameters) ? data.parameters : String(data.params || "").split(" ")).includes(p);
  const matches = (data, f) =>
    (!f.model || data.model === f.model) && (!f.provider || data.provider === f.provider) && hasParam(data, f.param) &&
    f.q.split(/\s+/).filter(Boolean).every((w) => (data.text || `${data.model} ${data.model_name} ${data.provider} ${data.provider_name} ${data.region}`).toLowerCase().includes(w));

  // The URL always says what the page shows, so a view can be shared.
  function syncUrl() {
    const params = new URLSearchParams(location.search);
    const f = filters();
    const set = (k, v) => (v ? params.set(k, v) : params.delete(k));
    set("q", f.q); if (!fixed.model) set("model", f.model); if (!fixed.provider) set("provider", f.provider); set("param", f.param);
    set("sort", state.sort); set("dir", state.sort ? state.dir : "");
    const query = params.toString();
    history.replaceState(null, "", location.pathname + (query ? "?" + query : ""));
  }

  function applyFilter() {
    const f = filters();
    let shown = 0;
    body.querySelectorAll("tr[data-model]").forEach((tr) => {
      const ok = matches(tr.dataset, f);
      tr.hidden = !ok;
      if (ok) shown += 1;
    });
    const count = document.querySelector("[data-count]");
    if (count) count.textContent = shown;
    let none = document.getElementById("lb-nomatch");
    if (!none) { none = document.createElement("p"); none.id = "lb-nomatch"; none.className = "empty"; none.setAttribute("role", "status"); table.parentElement.after(none); }
    none.textContent = tw.t("no_match");
    none.hidden = shown > 0 || !body.querySelector("tr[data-model]");
    drawScatter(state.rows.filter((r) => matches(r, f)));
  }

  function sortBy(key, dir) {
    const index = [...table.tHead.rows[0].cells].findIndex((th) => th.dataset.key === key);
    if (index < 0) return;
    const rows = [...body.querySelectorAll("tr[data-model]")];
    const value = (tr) => tr.cells[index].dataset.sort || "";
    rows.sort((a, b) => {
      const va = value(a), vb = value(b);
      if (va === "" || vb === "") return va === vb ? 0 : va === "" ? 1 : -1; // missing data last
      const na = parseFloat(va), nb = parseFloat(vb);
      const cmp = !isNaN(na) && !isNaN(nb) && /^-?[\d.e+-]+$/.test(va) ? na - nb : va.localeCompare(vb);
      return dir === "desc" ? -cmp : cmp;
    });
    rows.forEach((tr) => body.appendChild(tr));
    table.tHead.querySelectorAll("th").forEach((th) => th.removeAttribute("aria-sort"));
    table.tHead.rows[0].cells[index].setAttribute("aria-sort", dir === "desc" ? "descending" : "ascending");
    state.sort = key; state.dir = dir;
  }

  table.tHead.addEventListener("click", (event) => {
    if (event.target.closest("a.def")) return; // the definition link opens its page
    const th = event.target.closest("th[data-key]");
    if (!th) return;
    event.preventDefault();
    sortBy(th.dataset.key, state.sort === th.dataset.key && state.dir === "asc" ? "desc" : "asc");
    syncUrl();
  });
  if (form) {
    form.querySelectorAll("[data-filter]").forEach((el) => el.addEventListener("input", () => { applyFilter(); syncUrl(); }));
    form.querySelectorAll("[data-submit]").forEach((el) => el.addEventListener("change", () => form.submit()));
  }

  function legend(measured) {
    const box = document.getElementById("scatter-legend");
    if (!box) return;
    const seen = [...new Map(measured.map((r) => [r.provider, r.provider_name])).entries()];
    box.replaceChildren(...seen.map(([slug, name]) => {
      const b = document.createElement("button");
      const l = look(slug);
      b.type = "button"; b.className = "legend-item"; b.dataset.provider = slug;
      b.setAttribute("aria-pressed", String(!state.hidden.has(slug)));
      const glyph = document.createElement("span"); glyph.className = "glyph"; glyph.style.color = l.color; glyph.textContent = l.shape[1]; glyph.setAttribute("aria-hidden", "true");
      b.append(glyph, document.createTextNode(name));
      return b;
    }));
  }
  document.getElementById("scatter-legend")?.addEventListener("click", (event) => {
    const b = event.target.closest("[data-provider]");
    if (!b) return;
    const slug = b.dataset.provider;
    state.hidden.has(slug) ? state.hidden.delete(slug) : state.hidden.add(slug);
    applyFilter();
    document.querySelector(`#scatter-legend [data-provider="${CSS.escape(slug)}"]`)?.focus();
  });

  function drawScatter(rows) {
    const canvas = document.getElementById("chart-scatter");
    if (!canvas || !window.Chart) return;
    const measured = rows.filter((r) => r.ttft_p50 != null && r.tps != null);
    document.getElementById("scatter-empty").hidden = measured.length > 0;
    canvas.parentElement.hidden = measured.length === 0;
    legend(measured);
    const visible = measured.filter((r) => !state.hidden.has(r.provider));
    const xMax = axisLimit(visible.map((r) => r.ttft_p50));
    const byProvider = {};
    const clipped = [];
    visible.forEach((r) => {
      const l = look(r.provider);
      const out = xMax != null && r.ttft_p50 > xMax;
      if (out) clipped.push(`${r.model_name} · ${r.provider_name} (${Math.round(r.ttft_p50)} ms)`);
      (byProvider[r.provider] = byProvider[r.provider] || { label: r.provider_name, data: [], pointStyle: [], backgroundColor: l.color + "cc", borderColor: l.color, borderWidth: 2, pointRadius: 7, pointHoverRadius: 9 })
        .data.push({ x: out ? xMax : r.ttft_p50, y: r.tps, ttft: r.ttft_p50, label: `${r.model_name} · ${r.provider_name}`, n: r.figures && r.figures.ttft_p50 ? r.figures.ttft_p50.n : r.n });
      byProvider[r.provider].pointStyle.push(out ? "triangle" : l.shape[0]);
    });
    Object.values(byProvider).forEach((d) => { d.rotation = d.data.map((p) => (p.ttft !== p.x ? 90 : 0)); });
    note("scatter-clipped", clipped.length ? t("clipped_x", { count: clipped.length, limit: Math.round(xMax), names: clipped.join("; ") }) : "");
    state.scatterClipped = clipped.length;
    const datasets = Object.values(byProvider);
    const summary = document.getElementById("scatter-summary");
    if (summary) {
      const fastest = [...visible].sort((a, b) => a.ttft_p50 - b.ttft_p50)[0];
      const quickest = [...visible].sort((a, b) => b.tps - a.tps)[0];
      summary.textContent = visible.length ? tw.t("scatter_summary", { count: visible.length, fastest: fastest.model_name + " · " + fastest.provider_name, ttft: Math.round(fastest.ttft_p50), quickest: quickest.model_name + " · " + quickest.provider_name, tps: quickest.tps.toFixed(1) }) : "";
    }
    if (state.charts.scatter) {
      state.charts.scatter.data.datasets = datasets;
      state.charts.scatter.options.scales.x.max = xMax == null ? undefined : xMax;
      state.charts.scatter.update(); return;
    }
    state.charts.scatter = new Chart(canvas, {
      type: "scatter",
      data: { datasets },
      options: {
        maintainAspectRatio: false, animation: false,
        scales: { x: { title: { display: true, text: tw.t("ttft_p50_ms") }, beginAtZero: true, max: xMax == null ? undefined : xMax }, y: { title: { display: true, text: tw.t("output_tps") }, beginAtZero: true } },
        plugins: { legend: { display: false }, tooltip: { callbacks: { label: (ctx) => `${ctx.raw.label}: ${Math.round(ctx.raw.ttft)} ms, ${ctx.raw.y.toFixed(1)} ${tw.t("tok_s")} (n ${ctx.raw.n})` } } },
      },
    });
  }

  // Trends: one line per offering over time; a band for the 95% interval when one line is drawn; incident markers.
  const trendSel = { metric: (state.trend && state.trend.metric) || "ttft", window: (state.trend && state.trend.window) || "24h" };
  const incidentPlugin = {
    id: "incidents",
    afterDatasetsDraw(chart) {
      const marks = chart.options.plugins.incidents.marks || [];
      const { ctx, chartArea, scales } = chart;
      ctx.save(); ctx.strokeStyle = "#c92a2a"; ctx.fillStyle = "#c92a2a"; ctx.lineWidth = 1.5; ctx.setLineDash([4, 3]);
      marks.forEach((m) => {
        const x = scales.x.getPixelForValue(m.index);
        const end = m.end_index == null ? chartArea.right : scales.x.getPixelForValue(m.end_index);
        ctx.globalAlpha = 0.08; ctx.fillRect(x, chartArea.top, Math.max(end - x, 2), chartArea.bottom - chartArea.top); ctx.globalAlpha = 1;
        ctx.beginPath(); ctx.moveTo(x, chartArea.top); ctx.lineTo(x, chartArea.bottom); ctx.stroke();
        ctx.font = "bold 13px sans-serif"; ctx.fillText("⚠", x + 3, chartArea.top + 13);
      });
      ctx.restore();
    },
  };
  const fmt = (metric, v) => v == null ? "—" : metric === "ttft" || metric === "latency" ? Math.round(v) + " ms" : metric === "availability" ? (v * 100).toFixed(2) + "%" : metric === "price" ? "$" + (v / 1e6).toFixed(4) : v.toFixed(1);
  const shortTime = (t, win) => { const d = new Date(t); return win === "7d" ? d.toLocaleDateString(undefined, { month: "short", day: "numeric" }) + " " + String(d.getHours()).padStart(2, "0") + ":00" : String(d.getHours()).padStart(2, "0") + ":" + String(d.getMinutes()).padStart(2, "0"); };
  // The trend's legend in the page (it wraps, and scrolls past three rows): a swatch drawn with the line's own dash.
  function trendLegend(datasets) {
    const box = document.getElementById("trend-legend");
    if (!box) return;
    box.replaceChildren(...datasets.map((d) => {
      const item = document.createElement("span");
      item.className = "legend-item"; item.setAttribute("role", "listitem");
      const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
      svg.setAttribute("width", "26"); svg.setAttribute("height", "8"); svg.setAttribute("aria-hidden", "true"); svg.classList.add("swatch");
      const line = document.createElementNS("http://www.w3.org/2000/svg", "line");
      line.setAttribute("x1", "1"); line.setAttribute("x2", "25"); line.setAttribute("y1", "4"); line.setAttribute("y2", "4");
      line.setAttribute("stroke", d.borderColor); line.setAttribute("stroke-width", "2.5");
      if (d.borderDash.length) line.setAttribute("stroke-dasharray", d.borderDash.join(" "));
      svg.append(line);
      item.append(svg, document.createTextNode(d.label));
      return item;
    }));
    // A legend that scrolls is reachable from the keyboard (WCAG 2.1.1), one that fits is not a tab stop.
    if (box.scrollHeight > box.clientHeight + 1) box.tabIndex = 0; else box.removeAttribute("tabindex");
  }

  function drawTrend(data) {
    const canvas = document.getElementById("chart-trend");
    if (!canvas || !window.Chart) return;
    data = data || { labels: [], series: [], incidents: [] };
    const metric = data.metric || trendSel.metric;
    const series = data.series || [];
    document.getElementById("trend-empty").hidden = series.length > 0;
    canvas.parentElement.hidden = series.length === 0;
    const yMax = metric === "availability" ? null : axisLimit(series.flatMap((s) => s.values));
    const clipped = [];
    const datasets = series.map((s, i) => {
      const l = lineLook(i);
      const over = yMax == null ? [] : s.values.filter((v) => v != null && v > yMax);
      if (over.length) clipped.push(`${s.label} (${fmt(metric, Math.max(...over))})`);
      return { label: s.label, data: s.values.map((v) => (yMax != null && v != null && v > yMax ? yMax : v)), raw: s.values,
               borderColor: l.color, backgroundColor: l.color, borderDash: l.dash, pointStyle: l.shape[0],
               pointRadius: s.values.length < 30 ? 3 : 0, borderWidth: 2, tension: 0.2, spanGaps: true };
    });
    note("trend-clipped", clipped.length ? t("clipped_y", { count: clipped.length, limit: fmt(metric, yMax), names: clipped.join("; ") }) : "");
    state.trendClipped = clipped.length;
    trendLegend(datasets.slice(0, series.length));
    if (series.length === 1) {
      const c = lineLook(0).color + "33";
      datasets.push({ label: tw.t("ci_low"), data: series[0].lo, borderWidth: 0, pointRadius: 0, fill: false, spanGaps: true },
                    { label: tw.t("ci_band"), data: series[0].hi, borderWidth: 0, pointRadius: 0, backgroundColor: c, fill: "-1", spanGaps: true });
    }
    if (state.charts.trend) state.charts.trend.destroy();
    state.charts.trend = new Chart(canvas, {
      type: "line",
      data: { labels: (data.labels || []).map((t) => shortTime(t, data.window)), datasets },
      options: {
        maintainAspectRatio: false, animation: false,
        scales: { y: { title: { display: true, text: tw.t("trend_" + metric) }, beginAtZero: metric !== "availability", max: yMax == null ? undefined : yMax } },
        plugins: {
          legend: { display: false },
          tooltip: { callbacks: { label: (ctx) => `${ctx.dataset.label}: ${fmt(metric, ctx.dataset.raw ? ctx.dataset.raw[ctx.dataIndex] : ctx.raw)}` } },
          incidents: { marks: data.incidents || [] },
        },
      },
      plugins: [incidentPlugin],
    });
    const summary = document.getElementById("trend-summary");
    if (summary) summary.textContent = series.map((s) => {
      const vals = s.values.filter((v) => v != null);
      return vals.length ? tw.t("trend_line", { label: s.label, first: fmt(metric, vals[0]), last: fmt(metric, vals[vals.length - 1]), points: vals.length }) : "";
    }).filter(Boolean).join(" ");
    const list = document.getElementById("trend-incidents");
    if (list) list.replaceChildren(...(data.incidents || []).map((m) => {
      const li = document.createElement("li");
      li.textContent = "⚠ " + tw.t("incident_line", { label: m.label, metric: tw.t("metric_" + m.metric), region: m.region_name || m.region, at: new Date(m.opened_at).toLocaleString() });
      return li;
    }));
    document.querySelectorAll("[data-trend-metric]").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.trendMetric === trendSel.metric)));
    document.querySelectorAll("[data-trend-window]").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.trendWindow === trendSel.window)));
    state.trend = data;
  }
  async function loadTrend() {
    const params = new URLSearchParams(location.search);
    params.set("metric", trendSel.metric); params.set("trend_window", trendSel.window);
    if (table.dataset.kind) params.set("kind", table.dataset.kind); // the view the table shows (chat or embeddings)
    if (fixed.model) params.set("model", fixed.model);
    if (fixed.provider) params.set("provider", fixed.provider);
    if (fixed.offering) params.set("offering", fixed.offering);
    const response = await fetch("/leaderboard/trend.json?" + params.toString());
    if (response.ok) drawTrend(await response.json());
    state.trendLoads = (state.trendLoads || 0) + 1;
  }
  document.querySelectorAll("[data-trend-metric]").forEach((b) => b.addEventListener("click", () => { trendSel.metric = b.dataset.trendMetric; loadTrend(); }));
  document.querySelectorAll("[data-trend-window]").forEach((b) => b.addEventListener("click", () => { trendSel.window = b.dataset.trendWindow; loadTrend(); }));

  async function refresh() {
    const params = new URLSearchParams(location.search);
    if (fixed.model) params.set("model", fixed.model);
    if (fixed.provider) params.set("provider", fixed.provider);
    if (table.dataset.kind) params.set("kind", table.dataset.kind);
    const query = "?" + params.toString();
    const [fragment, json] = await Promise.all([
      fetch(table.dataset.rowsUrl + query).then((r) => r.text()),
      fetch(table.dataset.rowsUrl.replace(/rows\/$/, "data.json") + query).then((r) => r.json()),
    ]);
    body.innerHTML = fragment;
    if (fixed.offering) body.querySelectorAll("tr[data-offering]").forEach((tr) => { if (tr.dataset.offering !== fixed.offering) tr.remove(); });
    body.querySelectorAll("tr[data-model]").forEach((tr) => tr.classList.add("flash"));
    paintDots();
    state.rows = fixed.offering ? json.rows.filter((r) => String(r.offering_id) === fixed.offering) : json.rows;
    if (state.sort) sortBy(state.sort, state.dir);
    applyFilter();
    await loadTrend();
    state.refreshes += 1;
  }
  state.refresh = refresh;

  paintDots();
  const initial = new URLSearchParams(location.search);
  if (initial.get("sort")) { state.sort = initial.get("sort"); state.dir = initial.get("dir") === "desc" ? "desc" : "asc"; }
  applyFilter();
  drawTrend(state.trend);
  tw.live("/ws/leaderboard/", (message) => {
    // A reconnect may have missed a refresh: catch up on every hello except the first.
    if (message.event === "hello" && (state.hellos = (state.hellos || 0) + 1) === 1) return;
    refresh();
  }, document.getElementById("lb-live"));
})();
