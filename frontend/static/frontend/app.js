/* Shared behaviour: copy buttons, progress on submit, a reconnecting websocket helper. */
(function () {
  "use strict";
  const tw = (window.tw = window.tw || {});

  // Strings translated on the server ({% js_texts %} in base.html); %(name)s placeholders as in gettext.
  const texts = JSON.parse((document.getElementById("tw-texts") || {}).textContent || "{}");
  tw.t = (key, params) => String(texts[key] || key).replace(/%\((\w+)\)s/g, (_, name) => (params && name in params ? params[name] : ""));

  document.addEventListener("click", (event) => {
    const button = event.target.closest("[data-copy]");
    if (!button) return;
    const source = document.getElementById(button.dataset.copy);
    const text = source ? (source.value || source.textContent).trim() : "";
    const done = () => { const label = button.textContent; button.textContent = button.dataset.copied || tw.t("copied"); setTimeout(() => (button.textContent = label), 1500); };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, done);
    else { const area = document.createElement("textarea"); area.value = text; document.body.appendChild(area); area.select(); document.execCommand("copy"); area.remove(); done(); }
  });

  // WCAG 2.1.1: a table or record that scrolls inside its card can be reached and scrolled from the keyboard.
  function scrollersFocusable() {
    document.querySelectorAll(".table-wrap, pre").forEach((el) => {
      const scrolls = el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1;
      if (scrolls && !el.hasAttribute("tabindex")) el.tabIndex = 0;
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", scrollersFocusable);
  else scrollersFocusable();
  window.addEventListener("resize", scrollersFocusable);
  tw.scrollersFocusable = scrollersFocusable;

  // Every form submission shows progress on its button and cannot be sent twice.
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (form.dataset.noProgress !== undefined || event.defaultPrevented) return;
    const confirmText = form.dataset.confirm;
    if (confirmText && !window.confirm(confirmText)) { event.preventDefault(); return; }
    const button = form.querySelector("button[type=submit], button:not([type])");
    if (button) {
      setTimeout(() => { button.disabled = true; button.insertAdjacentHTML("afterbegin", '<span class="spinner" aria-hidden="true"></span>'); }, 0);
    }
  });

  tw.providerColor = (slug) => {
    const palette = ["#3b5bdb", "#e8590c", "#2b8a3e", "#c2255c", "#1098ad", "#7048e8", "#f08c00", "#5c940d", "#d6336c", "#495057"];
    let hash = 0;
    for (const ch of slug || "") hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
    return palette[hash % palette.length];
  };
  document.querySelectorAll("[data-provider-dot]").forEach((dot) => (dot.style.background = tw.providerColor(dot.dataset.providerDot)));

  // A websocket that reconnects with back-off; status element shows whether live updates flow.
  tw.live = (path, onMessage, statusEl) => {
    let delay = 500;
    const open = () => {
      const socket = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + path);
      socket.onopen = () => { delay = 500; if (statusEl) { statusEl.className = "live-on"; statusEl.textContent = statusEl.dataset.on || tw.t("live_on"); } };
      socket.onmessage = (event) => { try { onMessage(JSON.parse(event.data)); } catch (err) { console.error(err); } };
      socket.onclose = () => {
        if (statusEl) { statusEl.className = "live-off"; statusEl.textContent = statusEl.dataset.off || tw.t("live_off"); }
        setTimeout(open, delay); delay = Math.min(delay * 2, 15000);
      };
    };
    open();
  };

  tw.json = (id) => { const el = document.getElementById(id); return el ? JSON.parse(el.textContent) : null; };
})();
