/* Console: one websocket per tenant page; balance and the request log refresh when metering pushes. */
(function () {
  "use strict";
  const main = document.getElementById("console-main");
  if (!main || !window.tw) return;
  const state = (window.twConsole = { updates: 0 });
  const summary = document.getElementById("summary");
  const rows = document.getElementById("request-rows");
  let pending = null;

  async function refresh() {
    pending = null;
    if (summary) {
      const html = await fetch(main.dataset.summaryUrl, { credentials: "same-origin" }).then((r) => r.text());
      const holder = document.createElement("div");
      holder.innerHTML = html;
      ["balance", "month-spend", "requests-30d", "savings-30d"].forEach((id) => {
        const fresh = holder.querySelector("#" + id), old = document.getElementById(id);
        if (fresh && old && fresh.textContent !== old.textContent) { old.replaceWith(fresh); fresh.closest(".card").classList.add("flash"); }
      });
    }
    if (rows && !location.search.includes("cursor=")) {
      const table = document.getElementById("request-log");
      const html = await fetch(table.dataset.fragmentUrl, { credentials: "same-origin" }).then((r) => r.text());
      const known = new Set([...rows.querySelectorAll("tr[data-request-id]")].map((tr) => tr.dataset.requestId));
      rows.innerHTML = html;
      rows.querySelectorAll("tr[data-request-id]").forEach((tr) => { if (!known.has(tr.dataset.requestId)) tr.classList.add("flash"); });
      const empty = document.getElementById("requests-empty");
      if (empty) empty.hidden = rows.children.length > 0;
    }
    state.updates += 1;
  }

  window.tw.live("/ws/tenant/" + encodeURIComponent(main.dataset.tenant) + "/", (message) => {
    // A reconnect may have missed pushes: refresh on every hello except the first.
    if (message.event === "hello" && (state.hellos = (state.hellos || 0) + 1) === 1) return;
    if (!pending) pending = setTimeout(refresh, 150); // coalesce bursts of pushes into one refresh
  }, document.getElementById("tenant-live"));
  state.refresh = refresh;
})();

/* Billing: after a top-up, poll its status until Stripe's webhook has credited (or failed) it. */
(function () {
  "use strict";
  const card = document.getElementById("topup-progress");
  if (!card || card.dataset.status !== "pending") return;
  const texts = JSON.parse(document.getElementById("topup-texts").textContent);
  const state = document.getElementById("topup-state");
  const started = Date.now();
  const POLL_MS = 800, SLOW_MS = 60000;
  async function poll() {
    let body = null;
    try {
      const response = await fetch(card.dataset.statusUrl, { credentials: "same-origin" });
      if (response.ok) body = await response.json();
    } catch (err) { body = null; } // a network blip: try again on the next tick
    if (body && body.status !== "pending") {
      card.dataset.status = body.status;
      state.textContent = texts[body.status] || body.status;
      const cell = document.querySelector(`[data-topup-status="${body.id}"]`);
      if (cell) cell.textContent = texts["label_" + body.status] || body.status;
      card.classList.add("flash");
      if (window.twConsole && window.twConsole.refresh) window.twConsole.refresh();
      return;
    }
    if (Date.now() - started > SLOW_MS) { state.textContent = texts.slow; return; }
    setTimeout(poll, POLL_MS);
  }
  setTimeout(poll, POLL_MS);
})();

/* The one-time key: focus lands on its card, so the next Tab is its Copy button (not 16 stops away). */
(function () {
  "use strict";
  const card = document.getElementById("new-key");
  if (card) card.focus();
})();
