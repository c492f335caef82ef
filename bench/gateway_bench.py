"""Gateway overhead: direct vs Tokenway vs a minimal Python pass-through vs LiteLLM vs Portkey.

Same machine, one fast mock upstream (Node, zero latency, 50-chunk streams). Each
gateway is pinned to core 0 (``taskset -c 0``); the load generator (wrk), the mock
upstream, Redis and this driver share core 1. Bounded: every load step runs a fixed
number of seconds, every probe a fixed number of requests. Peers that cannot be
installed or started are reported as "not available" with the reason.

    make bench                                   # all benchmarks (needs REDIS_URL: devstack)
    .venv/bin/python -m tokenway.devstack test -- .venv/bin/python -m bench.gateway_bench [--seconds 5] [--only tokenway,direct]

Peers are installed under bench/.tools/ (git-ignored) on first use, by this script:
    python3.11 -m venv bench/.tools/litellm-venv && bench/.tools/litellm-venv/bin/pip install 'litellm[proxy]==1.108.7'
    bench/.tools/portkey: npm install of @portkey-ai/gateway@1.15.2 with overrides hono 4.9.7, @hono/node-server 1.13.5
    wrk: apt-get install wrk (when missing and running as root)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import psutil

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


# --- helpers -------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_port(port: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
        time.sleep(0.1)
    return False


def pinned(core: str, command: list[str]) -> list[str]:
    return ["taskset", "-c", core, *command] if shutil.which("taskset") and (os.cpu_count() or 1) > 1 else command


def tree_rss_mb(pid: int) -> float:
    try:
        proc = psutil.Process(pid)
        procs = [proc, *proc.children(recursive=True)]
        return sum(p.memory_info().rss for p in procs if p.is_running()) / 2**20
    except psutil.Error:
        return float("nan")


@dataclass
class Target:
    name: str
    url: str  # chat completions URL
    headers: dict[str, str] = field(default_factory=dict)
    pid: int | None = None
    error: str | None = None
    results: dict[str, float] = field(default_factory=dict)


@contextlib.contextmanager
def process(command: list[str], *, env: dict[str, str] | None = None, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as out:
        proc = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True
        )
        try:
            yield proc
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 15)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait()


# --- load: wrk ----------------------------------------------------------------------------------

WRK_LUA = """
wrk.method = "POST"
wrk.body = {body}
{headers}
"""


def wrk(target: Target, body: dict[str, Any], *, connections: int, seconds: float, workdir: Path) -> dict[str, float]:
    headers = {"content-type": "application/json", **target.headers}
    script = workdir / f"wrk-{target.name}-{connections}-{body.get('stream', False)}.lua"
    lines = "\n".join(f'wrk.headers["{k}"] = "{v}"' for k, v in headers.items())
    script.write_text(WRK_LUA.format(body=json.dumps(json.dumps(body)), headers=lines))
    command = pinned(
        LOAD_CORE,
        [
            "wrk",
            "-t1",
            f"-c{connections}",
            f"-d{max(1, round(seconds))}s",
            "--timeout",
            "10s",
            "--latency",
            "-s",
            str(script),
            target.url,
        ],
    )
    out = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 30).stdout
    return parse_wrk(out)


def _ms(value: str) -> float:
    number, unit = re.match(r"([\d.]+)(\w+)", value).groups()  # type: ignore[union-attr]
    return float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit]


def parse_wrk(out: str) -> dict[str, float]:
    result = {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))}  # type: ignore[union-attr]
    for pct in ("50", "99"):
        match = re.search(rf"^\s+{pct}(?:\.000)?%\s+(\S+)", out, re.MULTILINE)
        if match:
            result[f"p{pct}"] = _ms(match.group(1))
    errors = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    result["errors"] = float(errors.group(1)) if errors else 0.0
    if socket_errors:
        result["errors"] += sum(float(x) for x in socket_errors.groups())
    return result


def ttfb_ms(target: Target, samples: int, budget_s: float = 20.0) -> float:
    """Median time from sending a streaming request to its first SSE data byte (new connection each)."""
    host_port = target.url.split("//", 1)[1].split("/", 1)
    host, port = host_port[0].split(":")
    body = orjson.dumps({"model": MODEL, "messages": PROMPT, "stream": True})
    extra = "".join(f"{k}: {v}\r\n" for k, v in target.headers.items())
    request = (
        f"POST /{host_port[1]} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n{extra}"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode() + body
    timings: list[float] = []
    deadline = time.monotonic() + budget_s
    while len(timings) < samples and time.monotonic() < deadline:
        timings.append(_one_ttfb(host, int(port), request))
    return statistics.median(timings)


def _one_ttfb(host: str, port: int, request: bytes) -> float:
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        started = time.perf_counter()
        sock.sendall(request)
        seen = b""
        while b"data:" not in seen:
            chunk = sock.recv(65536)
            if not chunk:
                break
            seen += chunk
        first = (time.perf_counter() - started) * 1000
        while b"[DONE]" not in seen[-200:]:  # drain to the end of the stream; servers may keep the socket open
            chunk = sock.recv(65536)
            if not chunk:
                break
            seen += chunk
    return first


def measure(target: Target, seconds: float, workdir: Path) -> None:
    plain = {"model": MODEL, "messages": PROMPT, "max_tokens": 64}
    stream = {**plain, "stream": True}
    wrk(target, plain, connections=10, seconds=1, workdir=workdir)  # warm-up: pools, caches, JIT
    if target.pid:
        target.results["rss_idle"] = tree_rss_mb(target.pid)
    c50 = wrk(target, plain, connections=50, seconds=seconds, workdir=workdir)
    if target.pid:
        target.results["rss_loaded"] = tree_rss_mb(target.pid)
    c1 = wrk(target, plain, connections=1, seconds=seconds, workdir=workdir)
    c10 = wrk(target, plain, connections=10, seconds=seconds, workdir=workdir)
    streams = wrk(target, stream, connections=10, seconds=seconds, workdir=workdir)
    target.results.update(
        rps_c50=c50["rps"], errors=c50["errors"] + streams["errors"], p50_c1=c1["p50"], p99_c1=c1["p99"],
        p50_c10=c10["p50"], p99_c10=c10["p99"], streams_c10=streams["rps"], ttfb=ttfb_ms(target, TTFB_SAMPLES),
    )  # fmt: skip


# --- targets ----------------------------------------------------------------------------------


def setup_tokenway_redis(mock_port: int) -> tuple[str, str]:
    """Publish a one-offering catalog and a bench key as the platform would; returns (key, redis url)."""
    import redis

    from contracts import redis_keys as rk
    from contracts.apikey_format import generate_key, hash_key
    from contracts.keyrecord import KeyRecord
    from contracts.snapshot import CatalogSnapshot, OfferingSnapshot
    from contracts.usage import Prices

    url = os.environ["REDIS_URL"]
    client = redis.Redis.from_url(url)
    offering = OfferingSnapshot(
        offering_id=1, model=MODEL, provider="mock", upstream_model=MODEL, dialect="openai",
        base_url=f"http://127.0.0.1:{mock_port}/v1", usage_dialect="openai", cached_tokens_in_input=True,
        prices=Prices(input=150_000, output=600_000, cache_read=75_000), context_window=128_000, max_output=4096,
        parameters=("tools", "json_mode"),
    )  # fmt: skip
    client.set(
        rk.CATALOG_SNAPSHOT, CatalogSnapshot(version=1, generated_at=time.time(), offerings=(offering,)).to_json()
    )
    client.incr(rk.CATALOG_VERSION)
    key = generate_key()
    pepper = os.environ.get("TOKENWAY_KEY_PEPPER", "dev-insecure-key-pepper")
    record = KeyRecord(key_id=1, tenant_id=1, tenant_slug="bench", name="bench", prefix=key[:12])
    client.set(rk.key_record(hash_key(key, pepper)), record.to_json())
    client.set(rk.tenant_available(1), 10**15)
    client.delete(rk.USAGE_STREAM)
    client.close()
    return key, url


def pin_redis(url: str) -> None:
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    for proc in psutil.process_iter(["name", "cmdline"]):
        with contextlib.suppress(psutil.Error):
            if "redis-server" in (proc.info["name"] or "") and any(
                str(port) in part for part in proc.info["cmdline"] or ()
            ):
                proc.cpu_affinity([int(LOAD_CORE)])


def start_target(name: str, mock_port: int, stack: contextlib.ExitStack, workdir: Path) -> Target:
    port = free_port()
    starters: dict[str, Callable[[], Target]] = {
        "direct": lambda: Target("direct", f"http://127.0.0.1:{mock_port}/v1/chat/completions"),
        "tokenway": lambda: _tokenway(port, mock_port, stack, workdir, "uvicorn"),
        "tokenway-granian": lambda: _tokenway(port, mock_port, stack, workdir, "granian"),
        "python-passthrough": lambda: _passthrough(port, mock_port, stack, workdir),
        "litellm": lambda: _litellm(port, mock_port, stack, workdir),
        "portkey": lambda: _portkey(port, mock_port, stack, workdir),
    }
    return starters[name]()


def _started(target: Target, proc: subprocess.Popen[bytes], port: int, timeout: float, log: Path) -> Target:
    target.pid = proc.pid
    if not wait_port(port, timeout):
        tail = log.read_text(errors="replace")[-400:] if log.exists() else ""
        target.error = (
            f"did not listen within {timeout:.0f}s: {tail.strip().splitlines()[-1] if tail.strip() else 'no output'}"
        )
    return target


def _tokenway(port: int, mock_port: int, stack: contextlib.ExitStack, workdir: Path, server: str) -> Target:
    key, url = setup_tokenway_redis(mock_port)
    pin_redis(url)
    env = {**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'platform'}", "REDIS_URL": url}
    log = workdir / f"tokenway-{server}.log"
    proc = stack.enter_context(
        process(
            pinned(GATEWAY_CORE, [sys.executable, "-m", "routing", "--port", str(port), "--server", server]),
            env=env,
            log=log,
        )
    )
    name = "tokenway" if server == "uvicorn" else f"tokenway-{server}"
    target = Target(name, f"http://127.0.0.1:{port}/v1/chat/completions", {"authorization": f"Bearer {key}"})
    return _started(target, proc, port, 20, log)


def _passthrough(port: int, mock_port: int, stack: contextlib.ExitStack, workdir: Path) -> Target:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PASSTHROUGH_UPSTREAM": f"http://127.0.0.1:{mock_port}/v1"}
    granian = [sys.executable, "-m", "granian", "--interface", "asgi", "--loop", "uvloop", "--host", "127.0.0.1",
               "--port", str(port), "--workers", "1", "--no-access-log", "bench.gateway_bench:passthrough_app"]  # fmt: skip
    log = workdir / "passthrough.log"
    proc = stack.enter_context(process(pinned(GATEWAY_CORE, granian), env=env, log=log))
    return _started(Target("python-passthrough", f"http://127.0.0.1:{port}/v1/chat/completions"), proc, port, 20, log)


def _litellm(port: int, mock_port: int, stack: contextlib.ExitStack, workdir: Path) -> Target:
    binary = TOOLS / "litellm-venv" / "bin" / "litellm"
    target = Target("litellm", f"http://127.0.0.1:{port}/v1/chat/completions", {"authorization": "Bearer sk-bench"})
    target.error = ensure_litellm()
    if target.error:
        return target
    config = workdir / "litellm.yaml"
    config.write_text(
        f"model_list:\n  - model_name: {MODEL}\n    litellm_params:\n      model: openai/{MODEL}\n"
        f"      api_base: http://127.0.0.1:{mock_port}/v1\n      api_key: sk-mock\n"
        "litellm_settings:\n  telemetry: false\n  drop_params: true\n"
        "general_settings:\n  master_key: sk-bench\n"
    )
    env = {**os.environ, "LITELLM_LOG": "ERROR", "LITELLM_TELEMETRY": "False", "DISABLE_SCHEMA_UPDATE": "true"}
    env.pop("DATABASE_URL", None)
    log = workdir / "litellm.log"
    command = pinned(
        GATEWAY_CORE,
        [str(binary), "--config", str(config), "--port", str(port), "--host", "127.0.0.1", "--num_workers", "1"],
    )
    proc = stack.enter_context(process(command, env=env, log=log))
    return _started(target, proc, port, 120, log)


def _portkey(port: int, mock_port: int, stack: contextlib.ExitStack, workdir: Path) -> Target:
    script = TOOLS / "portkey" / "node_modules" / "@portkey-ai" / "gateway" / "build" / "start-server.js"
    headers = {
        "authorization": "Bearer sk-mock",
        "x-portkey-provider": "openai",
        "x-portkey-custom-host": f"http://127.0.0.1:{mock_port}/v1",
    }
    target = Target("portkey", f"http://127.0.0.1:{port}/v1/chat/completions", headers)
    target.error = ensure_portkey()
    if target.error:
        return target
    log = workdir / "portkey.log"
    proc = stack.enter_context(
        process(pinned(GATEWAY_CORE, ["node", str(script), f"--port={port}", "--headless"]), log=log)
    )
    return _started(target, proc, port, 30, log)


# --- installing the tools on first use (bounded; failures become "not available") ------------

PORTKEY_PACKAGE = {
    "name": "portkey-bench",
    "private": True,
    "dependencies": {"@portkey-ai/gateway": "1.15.2"},
    # 1.15.2 with newer hono / node-server answers every streaming request with 500.
    "overrides": {"hono": "4.9.7", "@hono/node-server": "1.13.5"},
}
LITELLM_SPEC = "litellm[proxy]==1.108.7"  # newest whose proxy extra installs from PyPI
INSTALL_TIMEOUT_S = 900


def _run_install(command: list[str], cwd: Path, log: Path) -> str | None:
    try:
        with log.open("wb") as out:
            code = subprocess.call(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, timeout=INSTALL_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"install failed: {exc!r}"
    return None if code == 0 else f"install failed (exit {code}), see {log}"


def ensure_wrk() -> str | None:
    if shutil.which("wrk"):
        return None
    if os.geteuid() == 0 and shutil.which("apt-get"):
        _run_install(["apt-get", "install", "-y", "-q", "wrk"], ROOT, TOOLS / "wrk-install.log")
    return None if shutil.which("wrk") else "wrk is not installed and could not be installed (apt-get install wrk)"


def ensure_litellm() -> str | None:
    venv = TOOLS / "litellm-venv"
    if (venv / "bin" / "litellm").exists():
        return None
    python = shutil.which("python3.11") or sys.executable
    error = _run_install([python, "-m", "venv", str(venv)], TOOLS, TOOLS / "litellm-venv.log")
    return error or _run_install(
        [str(venv / "bin" / "pip"), "install", "-q", LITELLM_SPEC], TOOLS, TOOLS / "litellm-install.log"
    )


def ensure_portkey() -> str | None:
    folder = TOOLS / "portkey"
    if (folder / "node_modules" / "@portkey-ai" / "gateway" / "build" / "start-server.js").exists():
        return None
    if not shutil.which("npm"):
        return "npm is not installed"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text(json.dumps(PORTKEY_PACKAGE, indent=1))
    return _run_install(["npm", "install", "--no-audit", "--no-fund"], folder, TOOLS / "portkey-install.log")


# --- report -------------------------------------------------------------------------------------

ROWS = [
    ("req/s, c=50, non-streaming", "rps_c50", "{:,.0f}"),
    ("added p50 latency, c=1 (ms)", "add_p50_c1", "{:+.2f}"),
    ("added p99 latency, c=1 (ms)", "add_p99_c1", "{:+.2f}"),
    ("added p50 latency, c=10 (ms)", "add_p50_c10", "{:+.2f}"),
    ("added p99 latency, c=10 (ms)", "add_p99_c10", "{:+.2f}"),
    ("streams/s, c=10 (50 chunks)", "streams_c10", "{:,.0f}"),
    ("added TTFB, single stream (ms)", "add_ttfb", "{:+.2f}"),
    ("RSS idle (MB)", "rss_idle", "{:.0f}"),
    ("RSS loaded (MB)", "rss_loaded", "{:.0f}"),
    ("errors (non-2xx/socket)", "errors", "{:.0f}"),
]


def derive(targets: list[Target]) -> None:
    direct = next((t for t in targets if t.name == "direct" and not t.error), None)
    for target in targets:
        r = target.results
        if not r or direct is None:
            continue
        d = direct.results
        for key in ("p50_c1", "p99_c1", "p50_c10", "p99_c10"):
            r[f"add_{key}"] = r[key] - d[key]
        r["add_ttfb"] = r["ttfb"] - d["ttfb"]


def table(targets: list[Target]) -> str:
    head = "| metric | " + " | ".join(t.name for t in targets) + " |"
    lines = [head, "|---" * (len(targets) + 1) + "|"]
    for label, key, fmt in ROWS:
        cells = []
        for t in targets:
            if t.error:
                cells.append("n/a")
            elif key in t.results and not (t.name == "direct" and key.startswith("add_")):
                cells.append(fmt.format(t.results[key]))
            else:
                cells.append("—")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    notes = [f"- {t.name}: not available — {t.error}" for t in targets if t.error]
    return "\n".join(lines + (["", *notes] if notes else []))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="duration of each load step")
    parser.add_argument("--only", default="direct,tokenway,tokenway-granian,python-passthrough,litellm,portkey")
    args, _ = parser.parse_known_args(argv)  # bench.run_all passes its arguments to every benchmark
    TOOLS.mkdir(parents=True, exist_ok=True)
    missing = ensure_wrk()
    if missing:
        print(f"gateway_bench: {missing}; nothing measured")
        return 0
    if not os.environ.get("REDIS_URL"):
        print("gateway_bench: REDIS_URL is not set; run through `make bench` (devstack)")
        return 1
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, {int(LOAD_CORE)})
    workdir = Path(tempfile.mkdtemp(prefix="gateway-bench-"))
    mock_js = workdir / "mock_upstream.js"
    mock_js.write_text(MOCK_JS)
    mock_port = free_port()
    targets: list[Target] = []
    with process(pinned(LOAD_CORE, ["node", str(mock_js), str(mock_port)]), log=workdir / "mock.log"):
        if not wait_port(mock_port, 10):
            print("gateway_bench: mock upstream did not start")
            return 1
        for name in args.only.split(","):
            with contextlib.ExitStack() as stack:
                target = start_target(name, mock_port, stack, workdir)
                if not target.error:
                    try:
                        measure(target, args.seconds, workdir)
                    except (subprocess.SubprocessError, OSError, AttributeError, KeyError) as exc:
                        target.error = f"measurement failed: {exc!r}"
                targets.append(target)
                print(
                    f"  measured {name}: {target.error or json.dumps({k: round(v, 3) for k, v in target.results.items()})}",
                    flush=True,
                )
    derive(targets)
    cores = (
        f"gateway on core {GATEWAY_CORE}, load/mock/redis on core {LOAD_CORE}"
        if (os.cpu_count() or 1) > 1
        else "single core, unpinned"
    )
    print(f"\nGateway overhead ({cores}; {args.seconds:.0f}s per step; wrk; Node mock upstream)\n")
    print(table(targets))
    print(
        "\nreproduce: make bench   or   .venv/bin/python -m tokenway.devstack test -- .venv/bin/python -m bench.gateway_bench"
    )
    (TOOLS).mkdir(parents=True, exist_ok=True)
    (TOOLS / "gateway_bench_results.json").write_text(json.dumps([t.__dict__ for t in targets], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
