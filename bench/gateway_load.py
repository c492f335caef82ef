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
from collections.abc import Callable, Iterator
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
    error: str | None = None  # could not be installed or started: no cell measured
    results: dict[str, float] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)  # result key -> why that cell has no figure


class WrkError(RuntimeError):
    """wrk ran but measured nothing usable (no output, or not one request answered)."""


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
    completed = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 30)
    return parse_wrk(completed.stdout, completed.stderr)


def _ms(value: str) -> float:
    number, unit = re.match(r"([\d.]+)(\w+)", value).groups()  # type: ignore[union-attr]
    return float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit]


def parse_wrk(out: str, err: str = "") -> dict[str, float]:
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if rps is None:
        found = "wrk gave no result" if shutil.which("wrk") else "wrk is not installed (Debian: apt-get install wrk)"
        raise WrkError(f"{found}: {(err.strip() or out)[-300:]!r}")
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
    if not re.search(r"^\s*[1-9]\d* requests in", out, re.MULTILINE):
        why = socket_errors.group(0) if socket_errors else "no request completed"
        raise WrkError(f"no request answered ({why})")
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


def warm(target: Target, body: dict[str, Any], workdir: Path, max_steps: int = WARM_MAX_STEPS) -> list[float]:
    steps: list[float] = []
    for _ in range(max_steps):
        steps.append(wrk(target, body, connections=50, seconds=WARM_STEP_S, workdir=workdir)["rps"])
        if len(steps) >= 2 and abs(steps[-1] - steps[-2]) <= WARM_AGREE * max(steps[-1], steps[-2]):
            break
    return steps


def rss_mb(target: Target) -> float:
    rss = tree_rss_mb(target.pid) if target.pid and not exit_note(target.pid) else float("nan")
    if rss != rss:  # nan: the process is gone
        raise ProcessLookupError(f"no process {target.pid}")
    return rss


def exit_note(pid: int | None) -> str:
    """' (process exited)' when the target's process is gone or a zombie, else ''."""
    if pid is None:
        return ""
    try:
        gone = psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        gone = True
    return " (process exited)" if gone else ""


def failure_reason(exc: BaseException, target: Target) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}{': ' + text[:160] if text else ''}{exit_note(target.pid)}"


def cell(target: Target, keys: tuple[str, ...], step: Callable[[], dict[str, float]]) -> None:
    """Run one measurement step; its figures go to ``target.results``, or its failure to each of ``keys``.

    A step that fails (a peer that exits, refuses, times out or answers garbage) costs its own cells only:
    the other steps still run and the table still prints.
    """
    try:
        target.results.update(step())
    except Exception as exc:  # noqa: BLE001 (a failing peer is a result to show, not a reason to lose the table)
        for key in keys:
            target.failures[key] = failure_reason(exc, target)


def measure(target: Target, seconds: float, workdir: Path, warm_max_steps: int = WARM_MAX_STEPS) -> None:
    """Every cell of the table for one target, each step isolated (see ``cell``)."""
    plain = {"model": MODEL, "messages": PROMPT, "max_tokens": 64}
    stream = {**plain, "stream": True}
    cell(target, ("warm_steps",), lambda: {"warm_steps": float(len(warm(target, plain, workdir, warm_max_steps)))})
    if target.pid:
        cell(target, ("rss_idle",), lambda: {"rss_idle": rss_mb(target)})

    def c50() -> dict[str, float]:
        result = wrk(target, plain, connections=50, seconds=seconds, workdir=workdir)
        return {"rps_c50": result["rps"], "errors": target.results.get("errors", 0.0) + result["errors"]}

    cell(target, ("rps_c50", "errors"), c50)
    if target.pid:
        cell(target, ("rss_loaded",), lambda: {"rss_loaded": rss_mb(target)})
    for connections in (1, 10):

        def latency(c: int = connections) -> dict[str, float]:
            result = wrk(target, plain, connections=c, seconds=seconds, workdir=workdir)
            return {f"p50_c{c}": result["p50"], f"p99_c{c}": result["p99"]}

        cell(target, (f"p50_c{connections}", f"p99_c{connections}"), latency)

    def streams() -> dict[str, float]:
        result = wrk(target, stream, connections=10, seconds=seconds, workdir=workdir)
        return {"streams_c10": result["rps"], "errors": target.results.get("errors", 0.0) + result["errors"]}

    cell(target, ("streams_c10",), streams)
    cell(target, ("ttfb",), lambda: {"ttfb": ttfb_ms(target, TTFB_SAMPLES)})
