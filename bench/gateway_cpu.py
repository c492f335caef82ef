"""Gateway CPU per request: process CPU time (user + system) of one gateway process divided by requests served.

CPU time, not wall time, so the figure holds on a loaded machine. One gateway process (uvicorn, as
``python -m routing``), the Node zero-latency mock upstream of gateway_bench, wrk at c=10 for a fixed
number of seconds after a warm-up; the key has no limits or budget and the catalog one offering (the
short request of gateway_bench). Profiles: non-streaming and streaming (50 chunks + usage chunk).
``--tree`` runs another checkout (e.g. ``git worktree add /tmp/tw-old <commit>``) the same way, with
that tree's own contracts publishing the catalog and key, so two commits compare side by side.

    REDIS_URL=redis://127.0.0.1:6379/11 .venv/bin/python -m bench.gateway_cpu [--tree /tmp/tw-old] [--seconds 8]
    ... --cprofile   # profile the gateway (cProfile) and print the top functions by own time
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import psutil

from bench.gateway_load import parse_wrk, wait_port
from bench.gateway_upstreams import MOCK_JS, ROOT
from devtools.ports import free_port

PUBLISH = """
import os, sys, time, redis
from contracts import redis_keys as rk
from contracts.apikey_format import generate_key, hash_key
from contracts.env import DEV_PEPPER
from contracts.keyrecord import KeyRecord
from contracts.snapshot import CatalogSnapshot, OfferingSnapshot
from contracts.usage import Prices
client = redis.Redis.from_url(os.environ["REDIS_URL"])
offering = OfferingSnapshot(
    offering_id=1, model="bench-model", provider="mock", upstream_model="bench-model", dialect="openai",
    base_url=f"http://127.0.0.1:{sys.argv[1]}/v1", usage_dialect="openai", cached_tokens_in_input=True,
    prices=Prices(input=150_000, output=600_000, cache_read=75_000), context_window=128_000, max_output=4096,
    parameters=("tools", "json_mode"))
client.set(rk.CATALOG_SNAPSHOT, CatalogSnapshot(version=1, generated_at=time.time(), offerings=(offering,)).to_json())
client.incr(rk.CATALOG_VERSION)
key = generate_key()
record = KeyRecord(key_id=1, tenant_id=1, tenant_slug="bench", name="bench", prefix=key[:12])
client.set(rk.key_record(hash_key(key, os.environ.get("TOKENWAY_KEY_PEPPER", DEV_PEPPER))), record.to_json())
client.set(rk.tenant_available(1), 10**15)
client.delete(rk.USAGE_STREAM)
print(key)
"""

WRK_LUA = """
wrk.method = "POST"
wrk.body = [[{body}]]
wrk.headers["content-type"] = "application/json"
wrk.headers["authorization"] = "Bearer {key}"
"""

PROFILES = {
    "non-streaming": {"model": "bench-model", "messages": [{"role": "user", "content": "Say something short about gateways."}]},
    "streaming": {"model": "bench-model", "stream": True, "stream_options": {"include_usage": True},
                  "messages": [{"role": "user", "content": "Say something short about gateways."}]},
}  # fmt: skip


def cpu_s(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def wrk(url: str, script: Path, seconds: int, connections: int) -> dict[str, float]:
    command = [
        "wrk",
        "-t1",
        f"-c{connections}",
        f"-d{seconds}s",
        "--timeout",
        "10s",
        "--latency",
        "-s",
        str(script),
        url,
    ]
    out = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 30).stdout
    result = parse_wrk(out)
    served = re.search(r"(\d+) requests in", out)  # wrk's own count, not req/s x our wall time
    result["served"] = float(served.group(1)) if served else result["rps"] * seconds
    return result


@contextlib.contextmanager
def started(command: list[str], *, env: dict[str, str], cwd: Path, log: Path) -> Any:
    with log.open("wb") as out:
        proc = subprocess.Popen(command, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            yield proc
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 2)  # SIGINT: lets cProfile write its file
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=ROOT, help="checkout whose gateway is measured")
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--connections", type=int, default=10)
    parser.add_argument("--only", default=",".join(PROFILES))
    parser.add_argument("--cprofile", action="store_true")
    args, _ = parser.parse_known_args(argv)
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url:
        print("gateway_cpu: REDIS_URL is not set")
        return 1
    tree = args.tree.resolve()
    workdir = Path(tempfile.mkdtemp(prefix="gateway-cpu-"))
    (workdir / "mock.js").write_text(MOCK_JS)
    mock_port, port = free_port(), free_port()
    env = {**os.environ, "PYTHONPATH": f"{tree}:{tree / 'platform'}", "REDIS_URL": redis_url}
    commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "-C", str(tree), "status", "--short", "--", "routing", "contracts"], capture_output=True, text=True
    ).stdout.strip()
    label = commit.stdout.strip() + (" (+ uncommitted routing/contracts edits)" if dirty else "")
    results: list[dict[str, Any]] = []
    with started(["node", str(workdir / "mock.js"), str(mock_port)], env=env, cwd=workdir, log=workdir / "mock.log"):
        if not wait_port(mock_port, 10):
            print("gateway_cpu: mock upstream did not start")
            return 1
        key = subprocess.run(
            [sys.executable, "-c", PUBLISH, str(mock_port)],
            env=env,
            cwd=tree,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        prof = workdir / "gateway.prof"
        launcher = (
            ["-m", "cProfile", "-o", str(prof), str(tree / "routing" / "__main__.py")]
            if args.cprofile
            else ["-m", "routing"]
        )
        command = [sys.executable, *launcher, "--port", str(port)]
        with started(command, env=env, cwd=tree, log=workdir / "gateway.log") as gateway:
            if not wait_port(port, 30):
                print("gateway_cpu: gateway did not start:", (workdir / "gateway.log").read_text()[-500:])
                return 1
            url = f"http://127.0.0.1:{port}/v1/chat/completions"
            for name in args.only.split(","):
                script = workdir / f"{name}.lua"
                script.write_text(WRK_LUA.format(body=json.dumps(PROFILES[name]), key=key))
                wrk(url, script, 2, args.connections)  # warm-up
                c0 = cpu_s(gateway.pid)
                result: dict[str, Any] = dict(wrk(url, script, args.seconds, args.connections))
                c1 = cpu_s(gateway.pid)
                requests = result["served"]
                result.update(
                    name=name,
                    requests=requests,
                    cpu_s=c1 - c0,
                    us_per_req=(c1 - c0) * 1e6 / requests if requests else float("nan"),
                )
                results.append(result)
                print(f"  {json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in result.items()})}",
                      flush=True)  # fmt: skip
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"\nGateway CPU per request at {label} (one uvicorn process, wrk c={args.connections}, {args.seconds} s "
        f"after a 2 s warm-up, Node mock upstream, 1 offering, key without limits)\n"
    )
    print(
        "| request | requests | gateway CPU (s) | CPU / request (µs) | p50 (ms) | errors |\n|---|---|---|---|---|---|"
    )
    for r in results:
        print(
            f"| {r['name']} | {r['requests']:,.0f} | {r['cpu_s']:.2f} | {r['us_per_req']:.0f} | {r['p50']:.1f} | "
            f"{r['errors']:.0f} |"
        )
    print(f"\nmachine load (1/5/15 min) at the end: {load}")
    print("reproduce: REDIS_URL=redis://127.0.0.1:6379/11 .venv/bin/python -m bench.gateway_cpu [--tree <checkout>]")
    if args.cprofile and prof.exists():
        import pstats

        pstats.Stats(str(prof)).sort_stats("tottime").print_stats(40)
    return 0


if __name__ == "__main__":
    sys.exit(main())
