"""Throughput of the simulated provider fleet with zero configured latency.

The fleet runs as ``python -m sim --zero-latency`` pinned to one core (``taskset -c 0``
when available); a bounded aiohttp load generator (fixed request count, time limit,
fixed concurrency) runs on another core. Prints a table and the command to reproduce.

    .venv/bin/python -m bench.sim_bench [--requests N] [--concurrency C] [--seconds S]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from devtools.ports import free_port

ROOT = Path(__file__).resolve().parent.parent
PROMPT = [{"role": "user", "content": "Tell me something about routing."}]
CASES = (
    ("openai chat, non-streaming", "/openai/v1/chat/completions", {"model": "gpt-4.1-mini", "messages": PROMPT}),
    (
        "openai chat, streaming",
        "/openai/v1/chat/completions",
        {"model": "gpt-4.1-mini", "messages": PROMPT, "stream": True, "stream_options": {"include_usage": True}},
    ),
    (
        "anthropic messages, non-streaming",
        "/anthropic/v1/messages",
        {"model": "claude-haiku-4.5", "max_tokens": 512, "messages": PROMPT},
    ),
    (
        "anthropic messages, streaming",
        "/anthropic/v1/messages",
        {"model": "claude-haiku-4.5", "max_tokens": 512, "messages": PROMPT, "stream": True},
    ),
)


@dataclass
class Result:
    name: str
    requests: int
    errors: int
    seconds: float
    chunks: int
    fleet_cpu: float = 0.0  # fleet process CPU seconds / wall seconds (1.0 = one core saturated)

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    @property
    def chunks_per_s(self) -> float:
        return self.chunks / self.seconds if self.seconds else 0.0


def _pin(core: int) -> list[str]:
    return ["taskset", "-c", str(core)] if shutil.which("taskset") and (os.cpu_count() or 1) > core else []


def _cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _start_fleet(port: int, profiles: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'platform'}"}
    command = [
        *_pin(0),
        sys.executable,
        "-m",
        "sim",
        "--zero-latency",
        "--port",
        str(port),
        "--profiles",
        str(profiles),
    ]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)


async def _wait_ready(base: str, session: aiohttp.ClientSession) -> None:
    for _ in range(200):
        try:
            async with session.get(f"{base}/_sim/health") as response:
                if response.status == 200:
                    return
        except aiohttp.ClientError:
            await asyncio.sleep(0.05)
    raise RuntimeError("simulated fleet did not start")


async def _run_case(
    session: aiohttp.ClientSession,
    pid: int,
    base: str,
    name: str,
    path: str,
    body: dict,
    total: int,
    concurrency: int,
    limit_s: float,
) -> Result:
    await session.post(f"{base}/_sim/reset")
    provider = path.split("/")[1]
    unlimited = {"provider": provider, "model": body["model"], "rpm": None, "tpm": None}
    async with session.post(f"{base}/_sim/limits", json=unlimited) as response:
        response.raise_for_status()
    remaining = [total]
    counts = {"ok": 0, "errors": 0, "chunks": 0}
    deadline = time.monotonic() + limit_s
    streaming = bool(body.get("stream"))

    async def worker() -> None:
        while remaining[0] > 0 and time.monotonic() < deadline:
            remaining[0] -= 1
            async with session.post(base + path, json=body) as response:
                payload = await response.read()
            if response.status != 200:
                counts["errors"] += 1
                continue
            counts["ok"] += 1
            if streaming:
                counts["chunks"] += payload.count(b"data: ")

    started, cpu = time.monotonic(), _cpu_seconds(pid)
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    wall = time.monotonic() - started
    return Result(name, counts["ok"], counts["errors"], wall, counts["chunks"], (_cpu_seconds(pid) - cpu) / wall)


async def _bench(total: int, concurrency: int, limit_s: float) -> list[Result]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    profiles = Path(tempfile.mkdtemp()) / "neutral.yaml"
    profiles.write_text("# neutral behaviour: no configured faults, no drift\ndefaults: {}\n")
    fleet = _start_fleet(port, profiles)
    try:
        connector = aiohttp.TCPConnector(limit=concurrency)
        async with aiohttp.ClientSession(connector=connector) as session:
            await _wait_ready(base, session)
            await _run_case(session, fleet.pid, base, "warm-up", CASES[0][1], CASES[0][2], 500, concurrency, 5)
            return [
                await _run_case(session, fleet.pid, base, name, path, body, total, concurrency, limit_s)
                for name, path, body in CASES
            ]
    finally:
        fleet.terminate()
        fleet.wait(timeout=10)


def table(results: list[Result], command: str) -> str:
    lines = [
        "Simulated fleet, zero configured latency, fleet pinned to one core",
        f"{'case':36} {'requests':>9} {'errors':>7} {'req/s':>9} {'chunks/s':>10} {'fleet cpu':>10}",
    ]
    for item in results:
        chunks = f"{item.chunks_per_s:10.0f}" if item.chunks else f"{'-':>10}"
        lines.append(
            f"{item.name:36} {item.requests:9d} {item.errors:7d} {item.rps:9.0f} {chunks} {item.fleet_cpu:9.0%}"
        )
    lines.append("fleet cpu < 100% means the load generator, not the fleet, was the limit")
    lines.append(f"reproduce: {command}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=15.0, help="time limit per case")
    args = parser.parse_args(argv)
    runner: Callable[..., Any]
    try:
        import uvloop

        runner = uvloop.run
    except ImportError:
        runner = asyncio.run
    generator_pin = _pin(1)
    if generator_pin:
        os.sched_setaffinity(0, {1})
    results = runner(_bench(args.requests, args.concurrency, args.seconds))
    command = f".venv/bin/python -m bench.sim_bench --requests {args.requests} --concurrency {args.concurrency} --seconds {args.seconds:g}"
    print(table(results, command))


if __name__ == "__main__":
    main()
