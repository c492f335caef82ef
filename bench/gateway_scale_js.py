"""Node programs of the paced-stream scale bench: an upstream that paces chunks like tokens, and a
client that holds N streams open and measures each chunk's delay from the upstream's write to its
arrival (both stamp ``performance.timeOrigin + performance.now()``, the same wall clock)."""

from __future__ import annotations

# argv: port, interval_ms, chunks. Each content chunk carries its write time: "t<epoch ms> ".
PACED_MOCK_JS = r"""
const http = require('http');
const {performance} = require('perf_hooks');
const [port, interval, chunks] = process.argv.slice(2).map(Number);
const now = () => performance.timeOrigin + performance.now();
// chunks 0: each stream sends as many content chunks as its request asks with 'paced-chunks=N' in its text
const usageOf = (n) => ({prompt_tokens: 12, completion_tokens: n, total_tokens: 12 + n, prompt_tokens_details: {cached_tokens: 0}});
const usage = usageOf(chunks);
function chunk(delta, finish, withUsage, used = usage) {
  return 'data: ' + JSON.stringify({id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: 1, model: 'bench-model',
    choices: withUsage ? [] : [{index: 0, delta, finish_reason: finish}], usage: withUsage ? used : null}) + '\n\n';
}
const completion = JSON.stringify({id: 'chatcmpl-mock', object: 'chat.completion', created: 1, model: 'bench-model',
  choices: [{index: 0, message: {role: 'assistant', content: 'ok'}, finish_reason: 'stop'}], usage});
const server = http.createServer((req, res) => {
  const body = [];
  req.on('data', (d) => body.push(d));
  req.on('end', () => {
    const text = Buffer.concat(body).toString();
    if (!text.includes('"stream":true')) {
      res.writeHead(200, {'content-type': 'application/json'}); res.end(completion); return;
    }
    res.writeHead(200, {'content-type': 'text/event-stream', 'cache-control': 'no-cache'});
    let count = chunks;
    if (!count) { const asked = text.match(/paced-chunks=(\d+)/); count = asked ? Number(asked[1]) : 0; }
    res.write(chunk({role: 'assistant', content: ''}, null, false));
    let sent = 0, timer = null;
    const tick = () => {
      if (res.destroyed) return;
      if (sent < count) {
        sent++;
        res.write(chunk({content: 't' + now().toFixed(2) + ' '}, null, false));
        timer = setTimeout(tick, interval);
      } else {
        res.write(chunk({}, 'stop', false));
        if (text.includes('include_usage')) res.write(chunk({}, null, true, usageOf(count)));
        res.end('data: [DONE]\n\n');
      }
    };
    timer = setTimeout(tick, Math.random() * interval);  // streams out of phase, as real ones are
    res.on('close', () => clearTimeout(timer));
  });
});
server.keepAliveTimeout = 60000;
server.listen(port, '127.0.0.1', 16384);
"""

# argv: url, authorization ("" for none), streams, ramp_per_s, warm_s, window_s. The ramp opens at most
# ramp_per_s streams a second and keeps at most MAX_PENDING unanswered (it follows the server's accept pace
# instead of overflowing its accept queue); it ends when all are answered or after RAMP_CAP_S.
# Prints one JSON line when the window opens ({"window": "start"}) and one with the results.
PACED_CLIENT_JS = r"""
const http = require('http');
const {performance} = require('perf_hooks');
const [url, auth] = process.argv.slice(2, 4);
const [streams, rampPerS, warmS, windowS] = process.argv.slice(4).map(Number);
const now = () => performance.timeOrigin + performance.now();
const agent = new http.Agent({keepAlive: false, maxSockets: Infinity});
const body = JSON.stringify({model: 'bench-model', messages: [{role: 'user', content: 'Stream for a while.'}], stream: true});
const headers = {'content-type': 'application/json', 'content-length': Buffer.byteLength(body)};
if (auth) headers.authorization = auth;
const BIN = 0.1, hist = new Uint32Array(200000);  // 0.1 ms bins up to 20 s
const MAX_PENDING = 500, RAMP_CAP_S = 90;
let answered = 0, rampEnded = 0;
let open = 0, started = 0, ok = 0, non200 = 0, errors = 0, cut = 0, measuring = false, chunks = 0, maxDelay = 0;
const codes = {};
const failed = (e) => { open--; errors++; codes[e.code || e.message] = (codes[e.code || e.message] || 0) + 1; };
const marker = /"content":"t(\d+\.\d+) /g;
function record(text, at) {
  marker.lastIndex = 0;
  let m;
  while ((m = marker.exec(text)) !== null) {
    if (!measuring) continue;
    const delay = Math.max(0, at - parseFloat(m[1]));
    hist[Math.min(hist.length - 1, Math.floor(delay / BIN))]++;
    chunks++;
    if (delay > maxDelay) maxDelay = delay;
  }
}
function one() {
  open++; started++;
  const req = http.request(url, {method: 'POST', agent, headers}, (res) => {
    answered++;
    if (res.statusCode !== 200) { non200++; codes[res.statusCode] = (codes[res.statusCode] || 0) + 1; res.resume(); res.on('end', () => { open--; }); return; }
    res.setEncoding('latin1');
    let tail = '', done = false;
    res.on('data', (d) => {
      const at = now();
      const text = tail + d;
      const end = text.lastIndexOf('\n\n');
      if (end < 0) { tail = text; return; }
      record(text.slice(0, end), at);
      tail = text.slice(end + 2);
      if (text.includes('[DONE]')) done = true;
    });
    res.on('end', () => { open--; if (done) ok++; else cut++; });
    res.on('error', failed);
  });
  req.on('error', failed);
  req.end(body);
}
function pct(p) {
  let total = 0; for (const c of hist) total += c;
  let seen = 0; const want = total * p;
  for (let i = 0; i < hist.length; i++) { seen += hist[i]; if (seen >= want && total) return i * BIN; }
  return NaN;
}
const stepMs = 10, perStep = Math.max(1, Math.round(rampPerS * stepMs / 1000));
const rampStart = now();
const ramp = setInterval(() => {
  for (let i = 0; i < perStep && started < streams && started - answered - errors < MAX_PENDING; i++) one();
  if ((started >= streams && answered + errors >= streams) || now() - rampStart > RAMP_CAP_S * 1000) {
    clearInterval(ramp);
    rampEnded = (now() - rampStart) / 1000;
    setTimeout(() => {
      measuring = true;
      const t0 = now(), base = {ok, non200, errors, cut};
      console.log(JSON.stringify({window: 'start', open}));
      setTimeout(() => {
        measuring = false;
        const seconds = (now() - t0) / 1000;
        console.log(JSON.stringify({
          window: 'end', seconds, ramp_s: rampEnded, open, started, answered, chunks, chunks_per_s: chunks / seconds,
          p50_ms: pct(0.5), p99_ms: pct(0.99), max_ms: maxDelay,
          ok, non200, errors, codes, cut, failed_in_window: (non200 - base.non200) + (errors - base.errors) + (cut - base.cut),
        }));
        process.exit(0);
      }, windowS * 1000);
    }, warmS * 1000);
  }
}, stepMs);
"""
