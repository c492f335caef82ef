"""Gateway instructions per request under valgrind (callgrind): a load-independent cost figure.

CPU time per request moves with the machine's load (cache misses, frequency, how many requests share
an event-loop wake-up); the number of instructions the gateway executes per request does not, so two
commits compare within a percent on a busy machine. One gateway process (uvicorn, ``python -m
routing``) runs under ``valgrind --tool=callgrind``; a Python client sends N requests, C at a time;
the gateway is stopped and callgrind's total is read. Two runs (N small and N large) and the
difference divided by the extra requests removes startup and shutdown. The requests are those of
bench/gateway_realistic.py: ``short`` (13 tokens, a key without limits) and ``realistic`` (32 KB body,
100 limited keys rotated, 52 offerings), non-streaming, or ``stream`` (the short request streamed:
52 chunks and the usage chunk, all in one burst).

``paced`` is the cost of one relayed chunk when chunks come like tokens, each in its own read (the
paced Node mock of bench/gateway_scale_js.py, one chunk per ``PACED_INTERVAL_MS``): the same number of
streams twice, with ``PACED_CHUNKS`` content chunks each, and the difference divided by the extra
chunks. It also counts the gateway's socket reads (libuv's ``uv__read``; the two runs differ only
in upstream chunks) to show that each chunk was a read of its own, and per extra chunk the event
loop's wake-ups: asyncio task steps, callbacks run (uvloop's ``Handle._run``) and timers armed, and with ``--functions N`` prints the N functions with the
most instructions per paced chunk (from the two runs' callgrind outputs).

    .venv/bin/python -m bench.gateway_instructions [--profile short,realistic,stream,paced,idle] [--tree /tmp/tw-old]

``idle`` is what the gateway does with no request at all, per second (key and snapshot polls, pub/sub,
timers): the gateway idles ``IDLE_SECONDS`` twice and the difference is divided by the extra seconds.
A paced run lasts longer than the short one by the extra chunks' pacing (~20 s), so that much idle
work is inside the paced figure too.

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
import time
from pathlib import Path
from typing import Any

import aiohttp

from bench.gateway_load import wait_port
from bench.gateway_realistic import long_prompt, private_redis, publish
from bench.gateway_scale_js import PACED_MOCK_JS
from bench.gateway_upstreams import MOCK_JS, ROOT
from devtools.ports import free_port

FEW, MANY = 100, 600  # requests per run: the difference (500) is what is counted
CONCURRENCY = 10
# Paced: valgrind runs the gateway ~50x slower, so a chunk costs it ~3-5 ms; 2 streams with one chunk
# per 20 ms each leave it idle between chunks, so nearly every chunk is a read of its own (the run
# prints the socket reads per extra chunk: 1.0 when each chunk was read alone).
PACED_STREAMS, PACED_CONCURRENCY = 20, 2
PACED_CHUNKS = (20, 120)  # content chunks per stream in the two runs: 20 x 100 extra chunks counted
PACED_INTERVAL_MS = 20
# Counted calls (callgrind's function names; a recursion level is suffixed 'N). libuv's read of a
# readable socket (uvloop): one call per wake-up of a connection with bytes to read.
READ_FUNCTION = re.compile(rb"^uv__read$")
WAKE_FUNCTIONS = {
    "task steps": re.compile(rb"^task_step_impl('\d+)?$"),  # an asyncio task resumed (C task)
    "callbacks": re.compile(rb"^__pyx_f_6uvloop_4loop_6Handle__run('\d+)?$"),  # call_soon callbacks run
    "timers armed": re.compile(rb"^uv_timer_start('\d+)?$"),  # call_later / call_at
}
IDLE_SECONDS = (5, 25)  # the idle profile's two runs
START_TIMEOUT_S = 300  # imports under valgrind take a while
SHORT = {
    "model": "bench-model",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Say something short about gateways."}],
}


def bodies(prompt: str) -> dict[str, dict[str, Any]]:
    realistic = {
        "model": "bench-model",
        "max_tokens": 256,
        "messages": [
            {"role": "system", "content": prompt},
            {"role": "user", "content": "Which rule covers module_42.py?"},
        ],
    }
    stream = {**SHORT, "stream": True, "stream_options": {"include_usage": True}}
    return {"short": SHORT, "realistic": realistic, "stream": stream}


async def drive(url: str, body: bytes, keys: list[str], count: int, concurrency: int = CONCURRENCY) -> int:
    """``count`` requests, ``concurrency`` at a time; returns how many were answered 200 in full."""
    ok = 0
    queue = iter(range(count))
    async with aiohttp.ClientSession() as session:

        async def worker() -> None:
            nonlocal ok
            for i in queue:
                headers = {"content-type": "application/json", "authorization": f"Bearer {keys[i % len(keys)]}"}
                async with session.post(url, data=body, headers=headers) as response:
                    answer = await response.read()
                    complete = b"data: [DONE]" in answer if b'"stream": true' in body else True
                    ok += response.status == 200 and complete

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return ok


def instructions(
    tree: Path,
    env: dict[str, str],
    url_body: tuple[bytes, list[str]],
    count: int,
    work: Path,
    concurrency: int = CONCURRENCY,
) -> tuple[int, Path]:
    """Total instructions of one gateway process that served ``count`` requests, and callgrind's output."""
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
        served = asyncio.run(drive(f"http://127.0.0.1:{port}/v1/chat/completions", body, keys, count, concurrency))
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
    return int(summary.group(1)), out


def socket_reads(out: Path, function: re.Pattern[bytes] = READ_FUNCTION) -> int:
    """Calls of ``function`` (libuv's socket read unless told) in one callgrind output."""
    names: dict[bytes, bytes] = {}
    reads, counting = 0, False
    for line in out.read_bytes().splitlines():
        if line.startswith(b"cfn="):
            ref, _, name = line[4:].partition(b" ")
            if name:
                names[ref] = name
            counting = bool(function.search(names.get(ref, b"")))
        elif line.startswith((b"fn=", b"fl=", b"fi=", b"fe=")):
            ref, _, name = line[3:].partition(b" ")
            if line.startswith(b"fn=") and name:
                names[ref] = name
            counting = False
        elif counting and line.startswith(b"calls="):
            reads += int(line[6:].split()[0])
            counting = False
    return reads


def self_cost(out: Path) -> dict[str, int]:
    """Instructions per function (self cost), from callgrind_annotate."""
    text = subprocess.run(["callgrind_annotate", "--threshold=100", str(out)], capture_output=True, text=True).stdout
    costs: dict[str, int] = {}
    for match in re.finditer(r"^\s*([\d,]+) \([^)]*\)\s+(\S.*)$", text, re.M):
        # without the binary's name: a symbol that two libraries export (OpenSSL's, loaded by both the
        # system and a wheel) is named after either from run to run
        name = re.sub(r" \[[^]]*\]$", "", match.group(2).strip())
        costs[name] = costs.get(name, 0) + int(match.group(1).replace(",", ""))
    return costs


def idle(tree: Path, env: dict[str, str], work: Path) -> tuple[float, int, int]:
    """Instructions per second of a gateway serving nothing; (per second, run totals)."""
    totals, wakes = [], []
    for seconds in IDLE_SECONDS:
        port = free_port()
        out = work / f"callgrind-idle-{seconds}-{port}.out"
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-m", "routing",
                   "--port", str(port)]  # fmt: skip
        proc = subprocess.Popen(
            command, env=env, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            if not wait_port(port, START_TIMEOUT_S):
                raise RuntimeError("gateway did not start under valgrind")
            time.sleep(seconds)  # the time is what is measured
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 2)
            proc.wait(timeout=120)
        total = re.search(rb"^(?:summary|totals): (\d+)", out.read_bytes(), re.M)
        if total is None:
            raise RuntimeError(f"no total in {out}")
        totals.append(int(total.group(1)))
        wakes.append({what: socket_reads(out, pattern) for what, pattern in WAKE_FUNCTIONS.items()})
    extra = IDLE_SECONDS[1] - IDLE_SECONDS[0]
    per_second = (totals[1] - totals[0]) / extra
    print(f"  idle: {per_second:,.0f} instructions per second; event loop per second: "
          + ", ".join(f"{what} {(wakes[1][what] - wakes[0][what]) / extra:.1f}" for what in WAKE_FUNCTIONS),
          flush=True)  # fmt: skip
    return per_second, totals[0], totals[1]


def paced(
    tree: Path, env: dict[str, str], work: Path, redis_url: str, body: bytes, functions: int
) -> tuple[float, int, int]:
    """Instructions per relayed chunk when each chunk is a read of its own; (per chunk, run totals)."""
    port = free_port()
    totals, outs, reads = [], [], []
    for chunks in PACED_CHUNKS:
        mock = subprocess.Popen(
            ["node", str(work / "paced.js"), str(port), str(PACED_INTERVAL_MS), str(chunks)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        try:
            if not wait_port(port, 10):
                raise RuntimeError("paced mock upstream did not start")
            _, key = publish(redis_url, port)
            total, out = instructions(tree, env, (body, [key]), PACED_STREAMS, work, PACED_CONCURRENCY)
        finally:
            mock.terminate()
            mock.wait()
        totals.append(total)
        outs.append(out)
        reads.append(socket_reads(out))
    extra = PACED_STREAMS * (PACED_CHUNKS[1] - PACED_CHUNKS[0])
    per_chunk = (totals[1] - totals[0]) / extra
    print(f"  paced: {per_chunk:,.0f} instructions per relayed chunk ({totals[0]:,} / {totals[1]:,}); "
          f"socket reads {reads[0]:,} / {reads[1]:,}: {(reads[1] - reads[0]) / extra:.2f} per extra chunk",
          flush=True)  # fmt: skip
    wakes = {what: [socket_reads(out, pattern) for out in outs] for what, pattern in WAKE_FUNCTIONS.items()}
    print(
        "  event loop per extra chunk: " + ", ".join(f"{what} {(b - a) / extra:.2f}" for what, (a, b) in wakes.items())
    )
    if functions:
        few, many = self_cost(outs[0]), self_cost(outs[1])
        diff = sorted(((many.get(n, 0) - few.get(n, 0), n) for n in many), reverse=True)[:functions]
        print("    instructions per paced chunk by function (self cost):")
        for cost, name in diff:
            print(f"    {cost / extra:>9,.0f}  {name[:150]}")
    return per_chunk, totals[0], totals[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="short,realistic")
    parser.add_argument("--tree", type=Path, default=ROOT, help="checkout whose gateway is measured")
    parser.add_argument("--functions", type=int, default=0, help="paced: print the top N functions per chunk")
    args, _ = parser.parse_known_args(argv)
    tree = args.tree.resolve()
    work = Path(tempfile.mkdtemp(prefix="gateway-instructions-"))
    (work / "mock.js").write_text(MOCK_JS)
    (work / "paced.js").write_text(PACED_MOCK_JS)
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
        env = {
            **os.environ,
            "PYTHONPATH": f"{tree}:{tree / 'platform'}",
            "REDIS_URL": redis_url,
            "TOKENWAY_SPOOL_DIR": str(work / "spool"),
        }
        all_bodies = bodies(long_prompt())
        for name in args.profile.split(","):
            if name == "idle":
                rows.append(("idle (per second)", *idle(tree, env, work)))
                continue
            if name == "paced":
                # max_tokens above the paced chunks' tokens: the gateway ends an answer that passes its hold
                body = json.dumps({**all_bodies["stream"], "max_tokens": 4096}).encode()
                rows.append(("paced (per relayed chunk)", *paced(tree, env, work, redis_url, body, args.functions)))
                keys, short_key = publish(redis_url, mock_port)  # the other profiles' catalog again
                continue
            profile_keys = keys if name == "realistic" else [short_key]
            url_body = (json.dumps(all_bodies[name]).encode(), profile_keys)
            few, _ = instructions(tree, env, url_body, FEW, work)
            many, _ = instructions(tree, env, url_body, MANY, work)
            rows.append((name, (many - few) / (MANY - FEW), few, many))
            print(f"  {name}: {rows[-1][1]:,.0f} instructions per request ({few:,} / {many:,})", flush=True)
    label = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "-C", str(tree), "status", "--short", "--", "routing", "contracts"], capture_output=True, text=True
    ).stdout.strip()
    print(
        f"\nGateway instructions per request at {label.stdout.strip()}{' (+ uncommitted edits)' if dirty else ''} "
        f"(callgrind; ({MANY} - {FEW} requests) difference, {CONCURRENCY} at a time; paced: {PACED_STREAMS} "
        f"streams of {PACED_CHUNKS[0]} / {PACED_CHUNKS[1]} chunks, {PACED_CONCURRENCY} at a time)\n"
    )
    print("| request | instructions / request | first run | second run |\n|---|---|---|---|")
    for name, per, few, many in rows:
        print(f"| {name} | {per:,.0f} | {few:,} | {many:,} |")
    print(f"\nmachine load (1/5/15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())} (does not move the count)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
