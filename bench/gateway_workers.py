"""N gateway processes behind one port: ``python -m routing --workers N``, req/s for N = 1, 2, ...

uvicorn's supervisor binds the port once and starts N worker processes that share its socket; each
worker runs the ASGI lifespan on its own (its Redis connection, HTTP session, key cache, refreshers,
usage spool segment). The requests are those of bench/gateway_realistic.py: ``short`` (13 tokens, a
key without limits) and ``realistic`` (32 KB body, 100 limited keys rotated, 52 offerings),
non-streaming; wrk at c=50 against the port, a Node zero-latency mock and a private redis-server.
Nothing is pinned: the workers, wrk, the mock and Redis share the machine's cores, so the table gives
gateway CPU beside req/s (summed over the workers) and the machine's load average. Each step is warmed
for 2 s, then measured.

    .venv/bin/python -m bench.gateway_workers [--workers 1,2] [--seconds 5] [--profile short,realistic]

/metrics is per worker process (the scrape lands on whichever worker accepts it); sum over scrapes
or run one worker per port behind a balancer when per-process series matter.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from bench.gateway_load import parse_wrk, process, wait_port
from bench.gateway_realistic import WRK_LUA, long_prompt, private_redis, publish
from bench.gateway_upstreams import MOCK_JS, ROOT
from devtools.ports import free_port

CONNECTIONS = 50
WARM_S = 2
START_TIMEOUT_S = 60


def tree_cpu_s(pid: int) -> float:
    """User + system CPU of a process and all its children (the supervisor and its workers)."""
    total = 0.0
    proc = psutil.Process(pid)
    for p in [proc, *proc.children(recursive=True)]:
        try:
            times = p.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def workers_of(pid: int) -> int:
    return len(psutil.Process(pid).children(recursive=True))


def wrk(url: str, script: Path, seconds: int) -> dict[str, float]:
    command = [
        "wrk",
        "-t1",
        f"-c{CONNECTIONS}",
        f"-d{seconds}s",
        "--timeout",
        "10s",
        "--latency",
        "-s",
        str(script),
        url,
    ]
    return parse_wrk(subprocess.run(command, capture_output=True, text=True, timeout=seconds + 30).stdout)


def wait_ready(url: str, script: Path) -> None:
    """Every worker has run its lifespan (catalog and keys loaded) once a short run answers without errors."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        result = wrk(url, script, 1)
        if result["rps"] > 0 and not result.get("errors"):
            return
        time.sleep(0.5)
    raise RuntimeError("the gateway's workers did not answer")


def measure(n: int, scripts: dict[str, Path], env: dict[str, str], seconds: int, work: Path) -> list[dict[str, Any]]:
    port = free_port()
    command = [sys.executable, "-m", "routing", "--port", str(port), "--workers", str(n)]
    rows = []
    with process(command, env=env, log=work / f"gateway-{n}.log") as gateway:
        if not wait_port(port, START_TIMEOUT_S):
            raise RuntimeError(f"gateway did not start: {(work / f'gateway-{n}.log').read_text()[-500:]}")
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        wait_ready(url, next(iter(scripts.values())))
        for name, script in scripts.items():
            wrk(url, script, WARM_S)
            c0, t0 = tree_cpu_s(gateway.pid), time.monotonic()
            result: dict[str, Any] = dict(wrk(url, script, seconds))
            wall = time.monotonic() - t0
            cores = (tree_cpu_s(gateway.pid) - c0) / wall
            load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
            result.update(
                workers=n,
                processes=workers_of(gateway.pid),
                name=name,
                cores=cores,
                load=load,
                per_core=result["rps"] / cores if cores else float("nan"),
            )
            rows.append(result)
            print(f"  {json.dumps(result)}", flush=True)
    return rows


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def table(rows: list[dict[str, Any]]) -> str:
    """One row per run (``--workers 1,2,1,2`` interleaves them); "vs 1 worker" against the mean of the 1-worker runs."""
    base = {r["name"]: _mean([x["rps"] for x in rows if x["name"] == r["name"] and x["workers"] == 1]) for r in rows}
    lines = [
        "| request | workers | req/s (c=50) | vs 1 worker | gateway CPU (cores, all workers) | req/s per gateway core "
        "| p50 / p99 (ms) | errors | load 1/5/15 min |",
        "|---" * 9 + "|",
    ]
    for r in rows:
        ratio = r["rps"] / base[r["name"]] if base.get(r["name"]) else float("nan")
        lines.append(
            f"| {r['name']} | {r['workers']} | {r['rps']:,.0f} | {ratio:.2f}x | {r['cores']:.2f} | {r['per_core']:,.0f} "
            f"| {r['p50']:.1f} / {r['p99']:.1f} | {r['errors']:.0f} | {r['load']} |"
        )
    lines.append("")
    for name in dict.fromkeys(r["name"] for r in rows):
        means = {
            n: _mean([r["rps"] for r in rows if r["name"] == name and r["workers"] == n])
            for n in sorted({r["workers"] for r in rows})
        }
        lines.append(
            f"{name}: mean req/s "
            + ", ".join(f"{n} worker(s) {v:,.0f} ({v / means[min(means)]:.2f}x)" for n, v in means.items())
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--profile", default="short,realistic")
    args, _ = parser.parse_known_args(argv)
    work = Path(tempfile.mkdtemp(prefix="gateway-workers-"))
    (work / "mock.js").write_text(MOCK_JS)
    mock_port = free_port()
    prompt = long_prompt()
    bodies = {
        "short": {
            "model": "bench-model",
            "max_tokens": 64,
            "messages": [{"role": "user", "content": "Say something short about gateways."}],
        },
        "realistic": {
            "model": "bench-model",
            "max_tokens": 256,
            "messages": [
                {"role": "system", "content": prompt},
                {"role": "user", "content": "Which rule covers module_42.py?"},
            ],
        },
    }
    rows: list[dict[str, Any]] = []
    with (
        private_redis(work) as (_, redis_url),
        process(["node", str(work / "mock.js"), str(mock_port)], log=work / "mock.log"),
    ):
        if not wait_port(mock_port, 10):
            print("gateway_workers: mock upstream did not start")
            return 1
        keys, short_key = publish(redis_url, mock_port)
        scripts = {}
        for name in args.profile.split(","):
            (work / f"{name}.json").write_text(json.dumps(bodies[name]))
            profile_keys = keys if name == "realistic" else [short_key]
            scripts[name] = work / f"{name}.lua"
            scripts[name].write_text(
                WRK_LUA.format(body=work / f"{name}.json", keys=", ".join(f'"{k}"' for k in profile_keys))
            )
        env = {
            **os.environ,
            "PYTHONPATH": f"{ROOT}:{ROOT / 'platform'}",
            "REDIS_URL": redis_url,
            "TOKENWAY_SPOOL_DIR": str(work / "spool"),
        }
        for n in (int(x) for x in args.workers.split(",")):
            rows += measure(n, scripts, env, args.seconds, work)
    rows.sort(key=lambda r: (list(bodies).index(r["name"]), r["workers"]))
    print(
        f"\n`python -m routing --workers N` behind one port, {os.cpu_count()} cores, nothing pinned (wrk, Node mock "
        f"and Redis share them), {args.seconds} s per step after {WARM_S} s warm-up\n"
    )
    print(table(rows))
    print("\nreproduce: .venv/bin/python -m bench.gateway_workers [--workers 1,2]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
