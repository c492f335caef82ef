"""Load and measurement for the gateway bench: processes pinned to cores, wrk runs, first-byte samples, RSS."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import psutil

from bench.gateway_upstreams import LOAD_CORE, MODEL, PROMPT, ROOT, TTFB_SAMPLES

# --- helpers -------------------------------------------------------------------------------------


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
def process(
    command: list[str], *, env: dict[str, str] | None = None, log: Path, cwd: Path = ROOT
) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as out:
        proc = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, start_new_session=True)
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
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if rps is None:
        found = "wrk gave no result" if shutil.which("wrk") else "wrk is not installed (Debian: apt-get install wrk)"
        raise SystemExit(f"{found}: {out[-300:]!r}")
    result = {"rps": float(rps.group(1))}
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


WARM_STEP_S = 2.0
WARM_AGREE = 0.05  # warm until two consecutive steps agree within 5% (Node's JIT needs more than a second)
WARM_MAX_STEPS = 15


def warm(target: Target, body: dict[str, Any], workdir: Path) -> list[float]:
    steps: list[float] = []
    for _ in range(WARM_MAX_STEPS):
        steps.append(wrk(target, body, connections=50, seconds=WARM_STEP_S, workdir=workdir)["rps"])
        if len(steps) >= 2 and abs(steps[-1] - steps[-2]) <= WARM_AGREE * max(steps[-1], steps[-2]):
            break
    return steps


def measure(target: Target, seconds: float, workdir: Path) -> None:
    plain = {"model": MODEL, "messages": PROMPT, "max_tokens": 64}
    stream = {**plain, "stream": True}
    steps = warm(target, plain, workdir)  # pools, caches, JIT
    target.results["warm_steps"] = float(len(steps))
    if target.pid:
        target.results["rss_idle"] = tree_rss_mb(target.pid)
    c50 = wrk(target, plain, connections=50, seconds=seconds, workdir=workdir)
    if target.pid:
        target.results["rss_loaded"] = tree_rss_mb(target.pid)
    c1 = wrk(target, plain, connections=1, seconds=seconds, workdir=workdir)
    c10 = wrk(target, plain, connections=10, seconds=seconds, workdir=workdir)
    streams = wrk(target, stream, connections=10, seconds=seconds, workdir=workdir)
    target.results.update(
        rps_c50=c50["rps"],
        errors=c50["errors"] + streams["errors"],
        p50_c1=c1["p50"],
        p99_c1=c1["p99"],
        p50_c10=c10["p50"],
        p99_c10=c10["p99"],
        streams_c10=streams["rps"],
        ttfb=ttfb_ms(target, TTFB_SAMPLES),
    )
