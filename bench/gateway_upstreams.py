"""The gateway bench's upstreams: a zero-latency Node mock and the minimal Python pass-through (the ceiling)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "bench" / ".tools"
MODEL = "bench-model"
PROMPT = [{"role": "user", "content": "Say something short about gateways."}]
STREAM_CHUNKS = 50
TTFB_SAMPLES = 200
GATEWAY_CORE, LOAD_CORE = "0", "1"

# --- the mock upstream: Node's http module, zero latency ------------------------------------

MOCK_JS = r"""
const http = require('http');
const port = parseInt(process.argv[2], 10);
const usage = {prompt_tokens: 12, completion_tokens: 50, total_tokens: 62, prompt_tokens_details: {cached_tokens: 0}};
const completion = JSON.stringify({id: 'chatcmpl-mock', object: 'chat.completion', created: 1, model: 'bench-model',
  choices: [{index: 0, message: {role: 'assistant', content: 'Gateways route requests to providers.'}, finish_reason: 'stop'}], usage});
function chunk(delta, finish, withUsage) {
  return 'data: ' + JSON.stringify({id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: 1, model: 'bench-model',
    choices: withUsage ? [] : [{index: 0, delta, finish_reason: finish}], usage: withUsage ? usage : null}) + '\n\n';
}
const parts = [chunk({role: 'assistant', content: ''}, null, false)];
for (let i = 0; i < 50; i++) parts.push(chunk({content: 'tok' + i + ' '}, null, false));
parts.push(chunk({}, 'stop', false));
const usageChunk = chunk({}, null, true);
http.createServer((req, res) => {
  const body = [];
  req.on('data', (d) => body.push(d));
  req.on('end', () => {
    const text = Buffer.concat(body).toString();
    if (req.method === 'HEAD' || req.method === 'GET') { res.writeHead(200, {'content-type': 'application/json'}); res.end('{"data":[]}'); return; }
    if (text.includes('"stream":true') || text.includes('"stream": true')) {
      res.writeHead(200, {'content-type': 'text/event-stream', 'cache-control': 'no-cache'});
      for (const part of parts) res.write(part);  // one write per chunk, no delay
      if (text.includes('include_usage')) res.write(usageChunk);
      res.end('data: [DONE]\n\n');
      return;
    }
    res.writeHead(200, {'content-type': 'application/json', 'content-length': Buffer.byteLength(completion)});
    res.end(completion);
  });
}).listen(port, '127.0.0.1');
"""

# --- the ceiling: raw ASGI + one aiohttp session, no auth, no accounting ---------------------

_passthrough_session: aiohttp.ClientSession | None = None
PASSTHROUGH_UPSTREAM = os.environ.get("PASSTHROUGH_UPSTREAM", "http://127.0.0.1:9/v1")


async def passthrough_app(scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
    """Minimal pass-through proxy: body in, same body to the upstream, response streamed back."""
    global _passthrough_session
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                _passthrough_session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1000))
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                assert _passthrough_session is not None
                await _passthrough_session.close()
                await send({"type": "lifespan.shutdown.complete"})
                return
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    assert _passthrough_session is not None
    url = PASSTHROUGH_UPSTREAM + scope["path"][len("/v1") :]
    async with _passthrough_session.post(url, data=body, headers={"content-type": "application/json"}) as response:
        headers = [(b"content-type", response.headers.get("content-type", "application/json").encode())]
        await send({"type": "http.response.start", "status": response.status, "headers": headers})
        async for chunk in response.content.iter_any():
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
