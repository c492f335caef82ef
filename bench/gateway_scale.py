"""Paced-stream scale test: N streams open at once, each chunk paced like a token (5 per second).

For each level (1k / 5k / ~10k open streams) a fresh gateway (pinned to core 0) relays streams from
a Node upstream that writes one chunk every 200 ms, stamped with its write time; a Node client
(core 1, with the upstream and Redis) holds N streams open and, in a measuring window after the
ramp, records each chunk's delay from the upstream's write to its arrival. The same client against
the upstream directly gives the delay the load generator itself adds; "added" is the difference.
Streams outlast the window, so the window's CPU is relaying only (stream set-up is measured by
gateway_bench). Per-stream memory: (RSS with N open − RSS idle) / N.

    .venv/bin/python -m devtools.devstack test -- .venv/bin/python -m bench.gateway_scale [--levels 1000,5000,9900]
    .venv/bin/python -m bench.gateway_scale --levels 1000 --tree /tmp/tw-old   # another checkout's gateway
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from bench.gateway_load import pinned, process, wait_port
from bench.gateway_peers import setup_tokenway_redis
from bench.gateway_realistic import private_redis
from bench.gateway_scale_js import PACED_CLIENT_JS, PACED_MOCK_JS
from bench.gateway_upstreams import GATEWAY_CORE, LOAD_CORE, ROOT
from devtools.ports import free_port

INTERVAL_MS = 200  # 5 chunks per second per stream
RAMP_PER_S = 500  # at most; the client keeps at most 500 unanswered (gateway_scale_js)
WARM_S = 10.0
WINDOW_S = 15.0
FDS_PER_STREAM = 2  # the gateway's: caller socket + upstream socket


@dataclass
class Level:
    streams: int
    via: dict[str, Any] = field(default_factory=dict)  # through the gateway
    direct: dict[str, Any] = field(default_factory=dict)  # client -> upstream
    error: str | None = None


def _cpu_s(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def _rss_mb(pid: int) -> float:
    return float(psutil.Process(pid).memory_info().rss) / 2**20


def run_client(url: str, auth: str, streams: int, workdir: Path, pid: int | None) -> dict[str, Any]:
    """One client run; with ``pid``, the gateway's CPU and RSS over the client's measuring window."""
    script = workdir / "client.js"
    script.write_text(PACED_CLIENT_JS)
    command = pinned(
        LOAD_CORE, ["node", str(script), url, auth, str(streams), str(RAMP_PER_S), str(WARM_S), str(WINDOW_S)]
    )
    budget = streams / RAMP_PER_S + WARM_S + WINDOW_S + 150  # the ramp may stop at its 90 s cap
    started = time.monotonic()
    result: dict[str, Any] = {}
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=ROOT) as client:
        assert client.stdout is not None
        cpu0 = wall0 = 0.0
        for line in client.stdout:
            message = json.loads(line)
            if message.get("window") == "start" and pid:
                cpu0, wall0 = _cpu_s(pid), time.monotonic()
            elif message.get("window") == "end":
                result = message
                if pid:
                    wall = time.monotonic() - wall0
                    result["cpu_cores"] = (_cpu_s(pid) - cpu0) / wall
                    result["rss_mb"] = _rss_mb(pid)
                    result["fds"] = psutil.Process(pid).num_fds()
            if time.monotonic() - started > budget:
                client.kill()
                break
        client.wait(timeout=30)
    if not result:
        raise RuntimeError("the client ended without results")
    return result


@contextlib.contextmanager
def upstream(workdir: Path, chunks: int) -> Any:
    script = workdir / "paced_mock.js"
    script.write_text(PACED_MOCK_JS)
    port = free_port()
    with process(
        pinned(LOAD_CORE, ["node", str(script), str(port), str(INTERVAL_MS), str(chunks)]), log=workdir / "mock.log"
    ):
        if not wait_port(port, 10):
            raise RuntimeError("paced upstream did not start")
        yield port


@contextlib.contextmanager
def gateway(mock_port: int, workdir: Path, tree: Path = ROOT) -> Any:
    """A fresh gateway on a private redis-server (its catalog and key only; nobody else's commands)."""
    with private_redis(workdir) as (_, redis_url):
        os.environ["REDIS_URL"] = redis_url
        key, url = setup_tokenway_redis(mock_port)
        with _gateway_process(url, key, workdir, tree) as started:
            yield started


@contextlib.contextmanager
def _gateway_process(url: str, key: str, workdir: Path, tree: Path = ROOT) -> Any:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": f"{tree}:{tree / 'platform'}", "REDIS_URL": url}
    command = pinned(GATEWAY_CORE, [sys.executable, "-m", "routing", "--port", str(port)])
    with process(command, env=env, log=workdir / "gateway.log", cwd=tree) as proc:
        if not wait_port(port, 20):
            raise RuntimeError("gateway did not start: " + (workdir / "gateway.log").read_text()[-300:])
        yield proc.pid, f"http://127.0.0.1:{port}/v1/chat/completions", f"Bearer {key}"


def measure_level(streams: int, workdir: Path, chunks: int, tree: Path = ROOT) -> Level:
    level = Level(streams)
    with upstream(workdir, chunks) as mock_port:
        level.direct = run_client(f"http://127.0.0.1:{mock_port}/v1/chat/completions", "", streams, workdir, None)
    with upstream(workdir, chunks) as mock_port, gateway(mock_port, workdir, tree) as (pid, url, auth):
        # One short request warms the key cache, scripts and the upstream pool before RSS idle is read.
        run_client(url, auth, 10, workdir, None)
        idle = _rss_mb(pid)
        level.via = run_client(url, auth, streams, workdir, pid)
        level.via["rss_idle_mb"] = idle
    return level


def table(levels: list[Level], load: str) -> str:
    head = (
        "| streams asked | open via gateway | ramp (s) | failed streams | gateway RSS (MB) | memory per open stream (KB) | relayed chunks/s | "
        "gateway CPU (cores) | CPU per chunk (µs) | chunk delay p50 / p99 via gateway (ms) | "
        "same client direct p50 / p99 (ms) | added p99 (ms) |"
    )
    lines = [head, "|---" * 12 + "|"]
    for lv in levels:
        if lv.error:
            lines.append(f"| {lv.streams:,} | n/a: {lv.error} |" + " |" * 10)
            continue
        v, d = lv.via, lv.direct
        failed = v["non200"] + v["errors"] + v["cut"]
        opened = v.get("answered", lv.streams) - v["non200"] - v["errors"] - v["cut"]
        per_stream_kb = (v["rss_mb"] - v["rss_idle_mb"]) * 1024 / max(1, opened)
        per_chunk_us = v["cpu_cores"] * 1e6 / v["chunks_per_s"] if v["chunks_per_s"] else float("nan")
        lines.append(
            f"| {lv.streams:,} | {opened:,} | {v.get('ramp_s', 0):.0f} | {failed} | {v['rss_mb']:.0f} | {per_stream_kb:.1f} | {v['chunks_per_s']:,.0f} | "
            f"{v['cpu_cores']:.2f} | {per_chunk_us:.1f} | {v['p50_ms']:.1f} / {v['p99_ms']:.1f} | "
            f"{d['p50_ms']:.1f} / {d['p99_ms']:.1f} | {v['p99_ms'] - d['p99_ms']:+.1f} |"
        )
    return "\n".join([*lines, "", f"machine load (1/5/15 min) at the end: {load}"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the Node processes inherit it
    ceiling = (resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 64) // FDS_PER_STREAM
    top = min(10_000, ceiling - ceiling % 100)
    parser.add_argument("--levels", default=f"1000,5000,{top}")
    parser.add_argument("--tree", type=Path, default=ROOT, help="checkout whose gateway is measured")
    args, _ = parser.parse_known_args(argv)
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, {int(LOAD_CORE)})
    levels = [int(x) for x in args.levels.split(",")]
    chunks = int((90 + WARM_S + WINDOW_S + 10) * 1000 / INTERVAL_MS)  # outlasts the longest ramp and the window
    workdir = Path(tempfile.mkdtemp(prefix="gateway-scale-"))
    results = []
    for streams in levels:
        try:
            level = measure_level(streams, workdir, chunks, args.tree.resolve())
        except (RuntimeError, OSError, subprocess.SubprocessError, psutil.Error) as exc:
            level = Level(streams, error=str(exc)[:120])
        results.append(level)
        print(f"  {streams} streams: via {json.dumps(level.via)} direct {json.dumps(level.direct)}", flush=True)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"\nPaced streams (one chunk per {INTERVAL_MS} ms per stream; gateway on core {GATEWAY_CORE}, Node client + "
        f"upstream + Redis on core {LOAD_CORE}; {WINDOW_S:.0f} s window after the ramp; fd ceiling here "
        f"{ceiling:,} streams per process)\n"
    )
    print(table(results, load))
    print("\nreproduce: .venv/bin/python -m bench.gateway_scale   (or: make bench)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
