/* Usage charts (console usage page and the ops dashboard) from the embedded usage-data JSON. */
(function () {
  "use strict";
  const data = window.tw.json("usage-data");
  if (!data || !window.Chart) return;
  const usd = (micros) => (micros || 0) / 1e6;
  const charts = (window.twCharts = {});
  const bar = (id, rows, label) => {
    const canvas = document.getElementById(id);
    if (!canvas || !rows.length) return;
    charts[id] = new Chart(canvas, {
      type: "bar",
      data: { labels: rows.map((r) => r.group || "—"), datasets: [
        { label: window.tw.t("usd"), data: rows.map((r) => usd(r.charge)), backgroundColor: rows.map((r) => window.tw.providerColor(String(r.group))) },
      ] },
      options: { maintainAspectRatio: false, animation: false, indexAxis: "y", plugins: { legend: { display: false }, tooltip: { callbacks: { afterLabel: (ctx) => `${rows[ctx.dataIndex].requests} ${window.tw.t("requests_short")} · ${window.tw.t(label)}` } } } },
    });
  };
  const day = document.getElementById("chart-day") || document.getElementById("chart-margin");
  if (day && data.by_day.length) {
    const labels = data.by_day.map((r) => r.day);
    const datasets = [
      { type: "bar", label: window.tw.t("charged_usd"), data: data.by_day.map((r) => usd(r.charge)), backgroundColor: "#3b5bdb99" },
      { type: "line", label: window.tw.t("cache_savings_usd"), data: data.by_day.map((r) => usd(r.savings)), borderColor: "#2b8a3e" },
    ];
    // Provider cost is in the data only for staff (the ops dashboard); a tenant's page never has it.
    if (data.by_day[0].cost !== undefined) datasets.splice(1, 0, { type: "bar", label: window.tw.t("provider_cost_usd"), data: data.by_day.map((r) => usd(r.cost)), backgroundColor: "#e8590c99" });
    if (day.id === "chart-margin") datasets.push({ type: "line", label: window.tw.t("margin_usd"), data: data.by_day.map((r) => usd(r.charge - r.cost)), borderColor: "#7048e8" });
    charts[day.id] = new Chart(day, { data: { labels, datasets }, options: { maintainAspectRatio: false, animation: false } });
  }
  bar("chart-model", data.by_model, "by_model");
  bar("chart-provider", data.by_provider, "by_provider");
  bar("chart-key", data.by_key, "by_key");
})();
