"""Gateway instructions per request under valgrind (callgrind): a load-independent cost figure.

CPU time per request moves with the machine's load (cache misses, frequency, how many requests share
an event-loop wake-up); the number of instructions the gateway executes per request does not, so two
commits compare within a percent on a busy machine. One gateway process (uvicorn, ``python -m
routing``) runs under ``valgrind --tool=callgrind``; a Python client sends N requests, C at a time;
the gateway is stopped and callgrind's total is read. Two runs (N small and N large) and the
difference divided by the extra requests removes startup and shutdown. The requests are those of
bench/gateway_realistic.py: ``short`` (13 tokens, a key without limits) and ``realistic`` (32 KB body,
100 limited keys rotated, 52 offerings), non-streaming, or ``stream`` (the short request streamed:
52 chunks and the usage chunk).

    .venv/bin/python -m bench.gateway_instructions [--profile short,realistic,stream] [--tree /tmp/tw-old]

``--tree`` measures another checkout (``git worktree add /tmp/tw-old <commit>``) with the same catalog,
keys and bodies. Slow on purpose (valgrind runs the gateway ~50x slower): about a minute per profile.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import aiohttp

from bench.gateway_load import wait_port
from bench.gateway_realistic import long_prompt, private_redis, publish
from bench.gateway_upstreams import MOCK_JS, ROOT
from devtools.ports import free_port

FEW, MANY = 100, 600  # requests per run: the difference (500) is what is counted
CONCURRENCY = 10
START_TIMEOUT_S = 300  # imports under valgrind take a while
SHORT = {"model": "bench-model", "max_tokens": 64, "messages": [{"role": "user", "content": "Say something short about gateways."}]}  # fmt: skip


def bodies(prompt: str) -> dict[str, dict[str, Any]]:
    realistic = {"model": "bench-model", "max_tokens": 256, "messages": [
        {"role": "system", "content": prompt}, {"role": "user", "content": "Which rule covers module_42.py?"}]}  # fmt: skip
    stream = {**SHORT, "stream": True, "stream_options": {"include_usage": True}}
    return {"short": SHORT, "realistic": realistic, "stream": stream}


async def drive(url: str, body: bytes, keys: list[str], count: int) -> int:
    """``count`` requests, ``CONCURRENCY`` at a time; returns how many were answered 200."""
    ok = 0
    queue = iter(range(count))
    async with aiohttp.ClientSession() as session:

        async def worker() -> None:
            nonlocal ok
            for i in queue:
                headers = {"content-type": "application/json", "authorization": f"Bearer {keys[i % len(keys)]}"}
                async with session.post(url, data=body, headers=headers) as response:
                    await response.read()
                    ok += response.status == 200

        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return ok


def instructions(tree: Path, env: dict[str, str], url_body: tuple[bytes, list[str]], count: int, work: Path) -> int:
    """Total instructions of one gateway process that served ``count`` requests."""
    port = free_port()
    out = work / f"callgrind-{count}-{port}.out"
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-m", "routing",
               "--port", str(port)]  # fmt: skip
    log = (work / f"gateway-{port}.log").open("wb")
    proc = subprocess.Popen(command, env=env, cwd=tree, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        if not wait_port(port, START_TIMEOUT_S):
            raise RuntimeError("gateway did not start under valgrind")
        body, keys = url_body
        served = asyncio.run(drive(f"http://127.0.0.1:{port}/v1/chat/completions", body, keys, count))
        if served != count:
            raise RuntimeError(f"{count - served} of {count} requests failed")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 2)
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
        log.close()
    summary = re.search(rb"^summary: (\d+)", out.read_bytes(), re.M) or re.search(
        rb"^totals: (\d+)", out.read_bytes(), re.M
    )
    if summary is None:
        raise RuntimeError(f"no total in {out}")
    return int(summary.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="short,realistic")
    parser.add_argument("--tree", type=Path, default=ROOT, help="checkout whose gateway is measured")
    args, _ = parser.parse_known_args(argv)
    tree = args.tree.resolve()
    work = Path(tempfile.mkdtemp(prefix="gateway-instructions-"))
    (work / "mock.js").write_text(MOCK_JS)
    mock_port = free_port()
    rows = []
    with private_redis(work) as (_, redis_url), contextlib.ExitStack() as stack:
        mock = stack.enter_context((work / "mock.log").open("wb"))
        node = subprocess.Popen(["node", str(work / "mock.js"), str(mock_port)], stdout=mock, stderr=subprocess.STDOUT)
        stack.callback(node.wait)
        stack.callback(node.terminate)
        if not wait_port(mock_port, 10):
            print("gateway_instructions: mock upstream did not start")
            return 1
        keys, short_key = publish(redis_url, mock_port)
        env = {**os.environ, "PYTHONPATH": f"{tree}:{tree / 'platform'}", "REDIS_URL": redis_url,
               "TOKENWAY_SPOOL_DIR": str(work / "spool")}  # fmt: skip
        all_bodies = bodies(long_prompt())
        for name in args.profile.split(","):
            profile_keys = keys if name == "realistic" else [short_key]
            url_body = (json.dumps(all_bodies[name]).encode(), profile_keys)
            few = instructions(tree, env, url_body, FEW, work)
            many = instructions(tree, env, url_body, MANY, work)
            rows.append((name, (many - few) / (MANY - FEW), few, many))
            print(f"  {name}: {rows[-1][1]:,.0f} instructions per request ({few:,} / {many:,})", flush=True)
    label = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(tree), "status", "--short", "--", "routing", "contracts"],
                           capture_output=True, text=True).stdout.strip()  # fmt: skip
    print(f"\nGateway instructions per request at {label.stdout.strip()}{' (+ uncommitted edits)' if dirty else ''} "
          f"(callgrind; ({MANY} - {FEW} requests) difference, {CONCURRENCY} at a time)\n")  # fmt: skip
    print("| request | instructions / request | run of " + f"{FEW} | run of {MANY} |\n|---|---|---|---|")
    for name, per, few, many in rows:
        print(f"| {name} | {per:,.0f} | {few:,} | {many:,} |")
    print(f"\nmachine load (1/5/15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())} (does not move the count)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
