"""Gateway hot path on a realistic request, beside the short one: req/s per core, and Redis CPU too.

Realistic: a ~32 KB body (a long system prompt, so fingerprinting and cache affinity run), 100 keys
of 10 tenants each with RPM, TPM, concurrency and monthly-budget limits (high enough never to refuse),
rotated per request; a 52-offering catalog (13 models x 4 providers; the requested model has 4).
Short: the 13-token prompt of gateway_bench with one key and no limits. The gateway is pinned to
core 0; wrk, the Node mock upstream and a private redis-server (so its CPU is ours alone) on core 1.
Each profile is warmed in 2 s steps until two consecutive steps agree within 5 %, then measured.

    .venv/bin/python -m bench.gateway_realistic [--seconds 5] [--cprofile] [--tree /tmp/tw-old]

``--tree`` measures another checkout's gateway (``git worktree add /tmp/tw-old <commit>``) with the
same catalog, keys and bodies (published by this tree's contracts), so commits compare side by side;
run them interleaved, since CPU per request moves with the machine's load.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from bench.gateway_load import parse_wrk, pinned, process, wait_port
from bench.gateway_upstreams import GATEWAY_CORE, LOAD_CORE, MOCK_JS, ROOT
from devtools.ports import free_port

MODELS = 13
PROVIDERS = 4
TENANTS = 10
KEYS_PER_TENANT = 10
WARM_STEP_S = 2.0
WARM_AGREE = 0.05
WARM_MAX_STEPS = 10
CONNECTIONS = 50

WRK_LUA = """
local f = io.open("{body}", "rb"); local body = f:read("*a"); f:close()
local keys = {{{keys}}}
local i = 0
request = function()
  i = i + 1
  return wrk.format("POST", nil, {{["content-type"] = "application/json",
    ["authorization"] = "Bearer " .. keys[(i % #keys) + 1]}}, body)
end
"""


def long_prompt(target_bytes: int = 32 * 1024) -> str:
    """A system prompt like a coding agent's: instructions and code, varied words (not one repeated token)."""
    lines, size, n = [], 0, 0
    while size < target_bytes:
        line = (
            f"Rule {n}: when editing module_{n % 97}.py keep function handle_{n}(request, limit={n % 13}) "
            f"pure; log event_{n * 7 % 1009} at level {['debug', 'info', 'warning'][n % 3]} and return early."
        )
        lines.append(line)
        size += len(line) + 1
        n += 1
    return "\n".join(lines)


def publish(redis_url: str, mock_port: int) -> tuple[list[str], str]:
    """52 offerings, 100 limited keys (realistic) and one unlimited key (short); returns (keys, short key)."""
    import redis

    from contracts import redis_keys as rk
    from contracts.apikey_format import generate_key, hash_key
    from contracts.env import DEV_PEPPER
    from contracts.keyrecord import KeyRecord, Limits
    from contracts.snapshot import CatalogSnapshot, OfferingSnapshot
    from contracts.usage import Prices

    client = redis.Redis.from_url(redis_url)
    offerings: list[OfferingSnapshot] = []
    for m in range(MODELS):
        for p in range(PROVIDERS):
            offering = OfferingSnapshot(
                offering_id=len(offerings) + 1,
                model="bench-model" if m == 0 else f"bench-model-{m}",
                provider=f"mock{p}",
                upstream_model="bench-model",
                dialect="openai",
                base_url=f"http://127.0.0.1:{mock_port}/v1",
                usage_dialect="openai",
                cached_tokens_in_input=True,
                prices=Prices(input=150_000 + 10_000 * p, output=600_000, cache_read=75_000),
                context_window=128_000,
                max_output=4096,
                parameters=("tools", "json_mode"),
                rpm=10_000_000,
                tpm=10_000_000_000,
            )
            offerings.append(offering)
    snapshot = CatalogSnapshot(version=1, generated_at=time.time(), offerings=tuple(offerings))
    client.set(rk.CATALOG_SNAPSHOT, snapshot.to_json())
    client.incr(rk.CATALOG_VERSION)
    pepper = os.environ.get("TOKENWAY_KEY_PEPPER", DEV_PEPPER)
    limits = Limits(rpm=1_000_000, tpm=10_000_000_000, max_concurrency=1_000)
    keys = []
    for tenant in range(1, TENANTS + 1):
        client.set(rk.tenant_available(tenant), 10**15)
        for k in range(KEYS_PER_TENANT):
            key = generate_key()
            record = KeyRecord(
                key_id=tenant * 100 + k,
                tenant_id=tenant,
                tenant_slug=f"t{tenant}",
                name=f"k{k}",
                prefix=key[:12],
                key_limits=limits,
                tenant_limits=limits,
                monthly_budget_micros=10**14,
            )
            client.set(rk.key_record(hash_key(key, pepper)), record.to_json())
            keys.append(key)
    short = generate_key()
    record = KeyRecord(key_id=1, tenant_id=999, tenant_slug="short", name="short", prefix=short[:12])
    client.set(rk.key_record(hash_key(short, pepper)), record.to_json())
    client.set(rk.tenant_available(999), 10**15)
    client.close()
    return keys, short


def wrk_step(url: str, script: Path, seconds: float) -> dict[str, float]:
    command = pinned(LOAD_CORE, ["wrk", "-t1", f"-c{CONNECTIONS}", f"-d{max(1, round(seconds))}s", "--timeout", "10s",
                                 "--latency", "-s", str(script), url])  # fmt: skip
    return parse_wrk(subprocess.run(command, capture_output=True, text=True, timeout=seconds + 30).stdout)


def cpu_s(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def run_profile(name: str, url: str, script: Path, seconds: float, gateway_pid: int, redis_pid: int) -> dict[str, Any]:
    steps = []
    for _ in range(WARM_MAX_STEPS):
        steps.append(wrk_step(url, script, WARM_STEP_S)["rps"])
        if len(steps) >= 2 and abs(steps[-1] - steps[-2]) <= WARM_AGREE * max(steps[-1], steps[-2]):
            break
    g0, r0, t0 = cpu_s(gateway_pid), cpu_s(redis_pid), time.monotonic()
    result: dict[str, Any] = dict(wrk_step(url, script, seconds))
    wall = time.monotonic() - t0
    g1, r1 = cpu_s(gateway_pid), cpu_s(redis_pid)
    requests = result["rps"] * seconds
    result.update(
        name=name,
        warm_steps=steps,
        gateway_cores=(g1 - g0) / wall,
        redis_cores=(r1 - r0) / wall,
        gateway_us_per_req=(g1 - g0) * 1e6 / requests if requests else float("nan"),
        redis_us_per_req=(r1 - r0) * 1e6 / requests if requests else float("nan"),
    )
    result["rps_per_core"] = result["rps"] / result["gateway_cores"] if result["gateway_cores"] else float("nan")
    return result


def table(results: list[dict[str, Any]], load: str) -> str:
    lines = [
        "| request | req/s (c=50) | gateway CPU (cores) | req/s per gateway core | gateway CPU / req (µs) | "
        "Redis CPU / req (µs) | p50 / p99 (ms) | errors | warm-up steps (req/s) |",
        "|---" * 9 + "|",
    ]
    for r in results:
        warm = ", ".join(f"{x:,.0f}" for x in r["warm_steps"])
        lines.append(
            f"| {r['name']} | {r['rps']:,.0f} | {r['gateway_cores']:.2f} | {r['rps_per_core']:,.0f} | "
            f"{r['gateway_us_per_req']:.0f} | {r['redis_us_per_req']:.0f} | {r['p50']:.1f} / {r['p99']:.1f} | "
            f"{r['errors']:.0f} | {warm} |"
        )
    return "\n".join([*lines, "", f"machine load (1/5/15 min) at the end: {load}"])


@contextlib.contextmanager
def private_redis(workdir: Path) -> Any:
    port = free_port()
    command = pinned(LOAD_CORE, ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                 "--appendonly", "no", "--dir", str(workdir)])  # fmt: skip
    with process(command, log=workdir / "redis.log") as proc:
        if not wait_port(port, 10):
            raise RuntimeError("redis-server did not start")
        yield proc.pid, f"redis://127.0.0.1:{port}/0"


def _label(tree: Path) -> str:
    """The measured tree's commit, marked when its gateway code has uncommitted edits."""
    git = ["git", "-C", str(tree)]
    commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run([*git, "status", "--short", "--", "routing", "contracts"], capture_output=True, text=True)
    return commit + (" (+ uncommitted routing/contracts edits)" if dirty.stdout.strip() else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--cprofile", action="store_true", help="profile the gateway during the realistic run")
    parser.add_argument("--tree", type=Path, default=ROOT, help="checkout whose gateway is measured")
    args, _ = parser.parse_known_args(argv)
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, {int(LOAD_CORE)})
    workdir = Path(tempfile.mkdtemp(prefix="gateway-realistic-"))
    (workdir / "mock.js").write_text(MOCK_JS)
    mock_port, port = free_port(), free_port()
    prompt = long_prompt()
    realistic = {
        "model": "bench-model",
        "max_tokens": 256,
        "messages": [
            {"role": "system", "content": prompt},
            {"role": "user", "content": "Which rule covers module_42.py?"},
        ],
    }
    short = {
        "model": "bench-model",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "Say something short about gateways."}],
    }
    results = []
    with (
        private_redis(workdir) as (redis_pid, redis_url),
        process(pinned(LOAD_CORE, ["node", str(workdir / "mock.js"), str(mock_port)]), log=workdir / "mock.log"),
    ):
        if not wait_port(mock_port, 10):
            print("gateway_realistic: mock upstream did not start")
            return 1
        keys, short_key = publish(redis_url, mock_port)
        tree = args.tree.resolve()
        env = {**os.environ, "PYTHONPATH": f"{tree}:{tree / 'platform'}", "REDIS_URL": redis_url}
        prof = workdir / "gateway.prof"
        launcher = [sys.executable, *(["-m", "cProfile", "-o", str(prof)] if args.cprofile else [])]
        main_py = str(tree / "routing" / "__main__.py") if args.cprofile else None
        command = [*launcher, *([main_py] if main_py else ["-m", "routing"]), "--port", str(port)]
        with process(pinned(GATEWAY_CORE, command), env=env, log=workdir / "gateway.log", cwd=tree) as gateway:
            if not wait_port(port, 20):
                print("gateway_realistic: gateway did not start:", (workdir / "gateway.log").read_text()[-300:])
                return 1
            url = f"http://127.0.0.1:{port}/v1/chat/completions"
            for name, body, profile_keys in (
                ("short (13 tokens, 1 key, no limits)", short, [short_key]),
                ("realistic (32 KB, 100 limited keys, 52 offerings)", realistic, keys),
            ):
                body_path = workdir / f"body-{len(profile_keys)}.json"
                body_path.write_text(json.dumps(body))
                script = workdir / f"wrk-{len(profile_keys)}.lua"
                script.write_text(WRK_LUA.format(body=body_path, keys=", ".join(f'"{k}"' for k in profile_keys)))
                results.append(run_profile(name, url, script, args.seconds, gateway.pid, redis_pid))
                print(f"  {json.dumps(results[-1])}", flush=True)
            if args.cprofile:
                gateway.send_signal(signal.SIGINT)
                gateway.wait(timeout=60)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"\nHot path at {_label(tree)}, non-streaming, c={CONNECTIONS} (gateway on core {GATEWAY_CORE}; wrk, Node mock, private Redis on "
        f"core {LOAD_CORE}; {args.seconds:.0f} s per step after warm-up)\n"
    )
    print(table(results, load))
    print("\nreproduce: .venv/bin/python -m bench.gateway_realistic")
    if args.cprofile and prof.exists():
        import pstats

        pstats.Stats(str(prof)).sort_stats("tottime").print_stats(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
