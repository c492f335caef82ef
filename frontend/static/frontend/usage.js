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
        { label: "USD", data: rows.map((r) => usd(r.charge)), backgroundColor: rows.map((r) => window.tw.providerColor(String(r.group))) },
      ] },
      options: { maintainAspectRatio: false, animation: false, indexAxis: "y", plugins: { legend: { display: false }, tooltip: { callbacks: { afterLabel: (ctx) => `${rows[ctx.dataIndex].requests} req · ${label}` } } } },
    });
  };
  const day = document.getElementById("chart-day") || document.getElementById("chart-margin");
  if (day && data.by_day.length) {
    const labels = data.by_day.map((r) => r.day);
    const datasets = [
      { type: "bar", label: "Charged (USD)", data: data.by_day.map((r) => usd(r.charge)), backgroundColor: "#3b5bdb99" },
      { type: "bar", label: "Provider cost (USD)", data: data.by_day.map((r) => usd(r.cost)), backgroundColor: "#e8590c99" },
      { type: "line", label: "Cache savings (USD)", data: data.by_day.map((r) => usd(r.savings)), borderColor: "#2b8a3e" },
    ];
    if (day.id === "chart-margin") datasets.push({ type: "line", label: "Margin (USD)", data: data.by_day.map((r) => usd(r.charge - r.cost)), borderColor: "#7048e8" });
    charts[day.id] = new Chart(day, { data: { labels, datasets }, options: { maintainAspectRatio: false, animation: false } });
  }
  bar("chart-model", data.by_model, "model");
  bar("chart-provider", data.by_provider, "provider");
  bar("chart-key", data.by_key, "key");
})();
