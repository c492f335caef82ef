/* Leaderboard: instant filter and sort of the server-rendered table, Chart.js charts, live refresh. */
(function () {
  "use strict";
  const tw = window.tw;
  const table = document.getElementById("lb-table");
  if (!table) return;
  const body = document.getElementById("lb-rows");
  const form = document.getElementById("lb-filters");
  const state = (window.twLeaderboard = { rows: tw.json("lb-data") || [], sort: null, dir: "asc", charts: {}, refreshes: 0 });
  const fixed = { model: "", provider: "" };
  const pathMatch = location.pathname.match(/^\/(models|providers)\/([^/]+)\//);
  if (pathMatch) fixed[pathMatch[1] === "models" ? "model" : "provider"] = decodeURIComponent(pathMatch[2]);

  const filters = () => {
    const get = (name) => (form && form.elements[name] ? form.elements[name].value : "");
    return { q: get("q").trim().toLowerCase(), model: get("model") || fixed.model, provider: get("provider") || fixed.provider };
  };
  const matches = (data, f) =>
    (!f.model || data.model === f.model) && (!f.provider || data.provider === f.provider) &&
    f.q.split(/\s+/).filter(Boolean).every((w) => (data.text || `${data.model} ${data.model_name} ${data.provider} ${data.provider_name} ${data.region}`).toLowerCase().includes(w));

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
      const cmp = !isNaN(na) && !isNaN(nb) && String(na) !== "NaN" && /^-?[\d.e+-]+$/.test(va) ? na - nb : va.localeCompare(vb);
      return dir === "desc" ? -cmp : cmp;
    });
    rows.forEach((tr) => body.appendChild(tr));
    table.tHead.querySelectorAll("th").forEach((th) => th.removeAttribute("aria-sort"));
    table.tHead.rows[0].cells[index].setAttribute("aria-sort", dir === "desc" ? "descending" : "ascending");
    state.sort = key; state.dir = dir;
  }

  table.tHead.addEventListener("click", (event) => {
    const th = event.target.closest("th[data-key]");
    if (!th) return;
    sortBy(th.dataset.key, state.sort === th.dataset.key && state.dir === "asc" ? "desc" : "asc");
  });
  if (form) {
    form.querySelectorAll("[data-filter]").forEach((el) => el.addEventListener("input", applyFilter));
    form.querySelectorAll("[data-submit]").forEach((el) => el.addEventListener("change", () => form.submit()));
  }

  function drawScatter(rows) {
    const canvas = document.getElementById("chart-scatter");
    if (!canvas || !window.Chart) return;
    const measured = rows.filter((r) => r.ttft_p50 != null && r.tps != null);
    document.getElementById("scatter-empty").hidden = measured.length > 0;
    canvas.parentElement.hidden = measured.length === 0;
    const byProvider = {};
    measured.forEach((r) => {
      (byProvider[r.provider] = byProvider[r.provider] || { label: r.provider_name, data: [], backgroundColor: tw.providerColor(r.provider) + "b3", borderColor: tw.providerColor(r.provider) })
        .data.push({ x: r.ttft_p50, y: r.tps, r: Math.max(4, Math.min(18, Math.sqrt(r.n || 1))), label: `${r.model_name} · ${r.provider_name} · ${r.region}` });
    });
    const datasets = Object.values(byProvider);
    if (state.charts.scatter) { state.charts.scatter.data.datasets = datasets; state.charts.scatter.update(); return; }
    state.charts.scatter = new Chart(canvas, {
      type: "bubble",
      data: { datasets },
      options: {
        maintainAspectRatio: false, animation: false,
        scales: { x: { title: { display: true, text: tw.t("ttft_p50_ms") }, beginAtZero: true }, y: { title: { display: true, text: tw.t("output_tps") }, beginAtZero: true } },
        plugins: { tooltip: { callbacks: { label: (ctx) => `${ctx.raw.label}: ${Math.round(ctx.raw.x)} ms, ${ctx.raw.y.toFixed(1)} ${tw.t("tok_s")}` } } },
      },
    });
  }

  const trends = { "24h": tw.json("trend-24h"), "7d": tw.json("trend-7d") };
  function drawTrend(window_) {
    const canvas = document.getElementById("chart-trend");
    if (!canvas || !window.Chart) return;
    const data = trends[window_] || { labels: [], series: [] };
    document.getElementById("trend-empty").hidden = (data.series || []).length > 0;
    canvas.parentElement.hidden = (data.series || []).length === 0;
    const datasets = (data.series || []).map((s) => ({ label: s.label, data: s.ttft, borderColor: tw.providerColor(s.provider || s.label), pointRadius: 0, tension: 0.25, spanGaps: true }));
    if (state.charts.trend) state.charts.trend.destroy();
    state.charts.trend = new Chart(canvas, {
      type: "line",
      data: { labels: data.labels || [], datasets },
      options: { maintainAspectRatio: false, animation: false, scales: { y: { title: { display: true, text: tw.t("ttft_p50_ms") }, beginAtZero: true } }, plugins: { legend: { display: datasets.length <= 8 } } },
    });
    document.querySelectorAll("[data-trend]").forEach((b) => b.setAttribute("aria-selected", String(b.dataset.trend === window_)));
  }
  document.querySelectorAll("[data-trend]").forEach((b) => b.addEventListener("click", () => drawTrend(b.dataset.trend)));

  async function refresh() {
    const query = location.search;
    const [fragment, json] = await Promise.all([
      fetch(table.dataset.rowsUrl + query).then((r) => r.text()),
      fetch(table.dataset.rowsUrl.replace(/rows\/$/, "data.json") + query).then((r) => r.json()),
    ]);
    body.innerHTML = fragment;
    body.querySelectorAll("tr[data-model]").forEach((tr) => tr.classList.add("flash"));
    body.querySelectorAll("[data-provider-dot]").forEach((dot) => (dot.style.background = tw.providerColor(dot.dataset.providerDot)));
    state.rows = json.rows; trends["24h"] = json.trend_24h; trends["7d"] = json.trend_7d;
    if (state.sort) sortBy(state.sort, state.dir);
    applyFilter();
    drawTrend(document.querySelector('[data-trend][aria-selected="true"]')?.dataset.trend || "24h");
    state.refreshes += 1;
  }
  state.refresh = refresh;

  applyFilter();
  drawTrend("24h");
  const params = new URLSearchParams(location.search);
  if (params.get("sort")) state.sort = params.get("sort"), state.dir = params.get("dir") || "asc";
  tw.live("/ws/leaderboard/", (message) => {
    // A reconnect may have missed a refresh: catch up on every hello except the first.
    if (message.event === "hello" && (state.hellos = (state.hellos || 0) + 1) === 1) return;
    refresh();
  }, document.getElementById("lb-live"));
})();
