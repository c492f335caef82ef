/* Playground: streams /v1/chat/completions (SSE) with the pasted or freshly created key. */
(function () {
  "use strict";
  const root = document.getElementById("playground");
  if (!root) return;
  const $ = (id) => document.getElementById(id);
  const keyInput = $("pg-key"), chat = $("pg-chat"), form = $("pg-form"), send = $("pg-send"), stop = $("pg-stop");
  const history = [];
  let controller = null;
  const csrf = () => (document.cookie.match(/csrftoken=([^;]+)/) || [])[1] || document.querySelector("[name=csrfmiddlewaretoken]")?.value || "";
  const showKeyError = (text) => { const el = $("pg-key-error"); el.hidden = !text; el.innerHTML = text ? `<li>${text}</li>` : ""; };
  const bubble = (role, text) => { const el = document.createElement("div"); el.className = "msg " + role; el.textContent = text; chat.appendChild(el); return el; };
  const showParamError = (text) => { const el = $("pg-param-error"); el.hidden = !text; el.textContent = ""; if (text) { const li = document.createElement("li"); li.textContent = text; el.appendChild(li); } };

  // The request body: model, system prompt, the conversation so far, and the parameters that are set.
  function body() {
    const payload = { model: $("pg-model").value, messages: [], stream: true, stream_options: { include_usage: true } };
    const system = $("pg-system").value.trim();
    if (system) payload.messages.push({ role: "system", content: system });
    payload.messages.push(...history);
    const temperature = $("pg-temperature").value.trim(), maxTokens = $("pg-max-tokens").value.trim();
    if (temperature !== "") {
      const t = Number(temperature);
      if (!(t >= 0 && t <= 2)) throw new RangeError(window.tw.t("bad_temperature"));
      payload.temperature = t;
    }
    if (maxTokens !== "") {
      const m = Number(maxTokens);
      if (!Number.isInteger(m) || m < 1) throw new RangeError(window.tw.t("bad_max_tokens"));
      payload.max_tokens = m;
    }
    return payload;
  }

  // Tokens and the tenant's charge come from the billed record, which lands a moment after the answer.
  async function facts(requestId, out) {
    if (!requestId) return;
    const line = document.createElement("div");
    line.className = "msg-facts small muted"; line.textContent = window.tw.t("cost_pending");
    out.after(line);
    const url = root.dataset.requestsUrl + encodeURIComponent(requestId) + "/?format=json";
    for (let wait = 250; wait < 8000; wait *= 2) {
      const response = await fetch(url, { credentials: "same-origin" }).catch(() => null);
      const f = response && response.ok ? await response.json() : null;
      if (f && f.found) {
        line.textContent = window.tw.t("message_facts", { input: f.tokens_in, output: f.output, cost: f.charge });
        $("pg-cost").textContent = f.charge;
        root.dataset.costs = String(Number(root.dataset.costs || 0) + 1);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
    line.textContent = window.tw.t("cost_later");
  }

  const newKey = $("pg-newkey");
  if (newKey) newKey.addEventListener("click", async () => {
    newKey.disabled = true; newKey.insertAdjacentHTML("afterbegin", '<span class="spinner"></span>');
    try {
      const response = await fetch(root.dataset.keyUrl, { method: "POST", headers: { "X-CSRFToken": csrf() }, credentials: "same-origin" });
      const body = await response.json();
      if (!response.ok) throw new Error(body.error ? body.error.message : response.statusText);
      keyInput.value = body.key; keyInput.type = "text"; showKeyError("");
    } catch (err) { showKeyError(String(err.message || err)); }
    finally { newKey.disabled = false; newKey.querySelector(".spinner")?.remove(); }
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const key = keyInput.value.trim(), text = $("pg-input").value.trim();
    if (!key) { showKeyError(window.tw.t("key_missing")); keyInput.focus(); return; }
    if (!text) return;
    showKeyError("");
    let payload;
    history.push({ role: "user", content: text });
    try { payload = body(); showParamError(""); } catch (err) { history.pop(); showParamError(err.message); return; }
    bubble("user", text);
    const out = bubble("assistant", "");
    out.innerHTML = '<span class="spinner"></span>';
    send.disabled = true; stop.hidden = false;
    controller = new AbortController();
    const started = performance.now();
    let firstAt = null, answer = "", usage = null;
    const headers = { "Content-Type": "application/json", Authorization: "Bearer " + key };
    if ($("pg-mode").value) headers["x-tokenway-route"] = $("pg-mode").value;
    try {
      const response = await fetch("/v1/chat/completions", {
        method: "POST", headers, signal: controller.signal,
        body: JSON.stringify(payload),
      });
      $("pg-meta").hidden = false;
      const requestId = response.headers.get("x-request-id");
      $("pg-rid").textContent = requestId || "—";
      $("pg-provider").textContent = [response.headers.get("x-tokenway-provider"), response.headers.get("x-tokenway-offering")].filter(Boolean).join(" · ") || "—";
      $("pg-route").textContent = response.headers.get("x-tokenway-route") || "—";
      if (!response.ok) {
        const body = await response.json().catch(() => ({}));
        throw new Error((body.error && (body.error.message || body.error.code)) || `HTTP ${response.status}`);
      }
      const reader = response.body.getReader(), decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut); buffer = buffer.slice(cut + 2);
          for (const line of block.split("\n")) {
            if (!line.startsWith("data:")) continue;
            const payload = line.slice(5).trim();
            if (payload === "[DONE]") continue;
            const chunk = JSON.parse(payload);
            const delta = chunk.choices && chunk.choices[0] && chunk.choices[0].delta && chunk.choices[0].delta.content;
            if (delta) { if (firstAt === null) firstAt = performance.now(); answer += delta; out.textContent = answer; }
            if (chunk.usage) usage = chunk.usage;
          }
        }
      }
      history.push({ role: "assistant", content: answer });
      $("pg-ttft").textContent = firstAt === null ? "—" : `${Math.round(firstAt - started)} ms`;
      $("pg-usage").textContent = usage ? window.tw.t("tokens_in_out", { input: usage.prompt_tokens, output: usage.completion_tokens }) : "—";
      root.dataset.done = String(Number(root.dataset.done || 0) + 1);
      facts(requestId, out);
    } catch (err) {
      out.classList.add("error");
      out.textContent = err.name === "AbortError" ? (answer + " " + window.tw.t("stopped")) : window.tw.t("error", { message: err.message || err });
      history.pop();
    } finally {
      send.disabled = false; stop.hidden = true; controller = null;
    }
  });
  stop.addEventListener("click", () => controller && controller.abort());
})();
