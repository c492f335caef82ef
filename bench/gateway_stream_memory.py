"""What one open stream holds in the gateway: Python heap per stream by source line, objects by type.

One gateway process runs under tracemalloc (``--serve``: uvicorn in-process, as ``python -m routing``
runs it); a Node upstream paces chunks like tokens (bench/gateway_scale_js.py, one per 200 ms, long
enough to outlast the measurement); a Python client opens N streams and keeps reading them. The
gateway writes a tracemalloc snapshot and a count of live objects by type on SIGUSR1: once with one
stream warmed and closed, once with N open. The difference divided by N is each stream's share, by
the line that allocated it. RSS per stream is printed too (what gateway_scale measures at scale).

    .venv/bin/python -m bench.gateway_stream_memory [--streams 200] [--prompt-kb 100] [--tree /tmp/tw-old]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp
import psutil

from bench.gateway_load import wait_port
from bench.gateway_realistic import private_redis
from bench.gateway_scale_js import PACED_MOCK_JS
from bench.gateway_upstreams import ROOT
from devtools.ports import free_port

INTERVAL_MS = 200
CHUNKS = 600  # two minutes of chunks: the streams stay open through both snapshots
FRAMES = 6
SETTLE_S = 3.0


def serve(port: int, dump: Path) -> None:
    """The gateway under tracemalloc; SIGUSR1 writes (snapshot, object counts) to ``dump``."""
    tracemalloc.start(FRAMES)
    import uvicorn

    def on_signal(*_: Any) -> None:
        gc.collect()
        counts = Counter(type(o).__qualname__ for o in gc.get_objects())
        with dump.open("wb") as out:
            pickle.dump((tracemalloc.take_snapshot(), counts), out)

    signal.signal(signal.SIGUSR1, on_signal)
    uvicorn.run(
        "routing.asgi:app",
        host="127.0.0.1",
        port=port,
        loop="uvloop",
        http="httptools",
        lifespan="on",
        access_log=False,
        log_level="warning",
        log_config=None,
    )


def stream_body(prompt_kb: int) -> dict[str, Any]:
    """A short question, or one behind a system prompt of ``prompt_kb`` KB (an agent's context)."""
    messages = [{"role": "user", "content": "Stream for a while."}]
    if prompt_kb:
        line = "The ledger keeps every hold, settlement and reversal; each line names its account. "
        messages.insert(0, {"role": "system", "content": line * (prompt_kb * 1024 // len(line))})
    return {"model": "bench-model", "stream": True, "stream_options": {"include_usage": True}, "messages": messages}


async def hold_streams(
    url: str, key: str, count: int, opened: asyncio.Event, stop: asyncio.Event, body: dict[str, Any]
) -> int:
    """Open ``count`` streams (reading each as it flows) until ``stop``; returns how many got a 200."""
    ok = 0
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one() -> None:
            nonlocal ok
            async with session.post(url, json=body, headers={"authorization": f"Bearer {key}"}) as response:
                ok += response.status == 200
                if ok == count:
                    opened.set()
                async for _ in response.content.iter_any():
                    if stop.is_set():
                        return

        tasks = [asyncio.create_task(one()) for _ in range(count)]
        await stop.wait()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return ok


def snapshot(pid: int, dump: Path) -> tuple[tracemalloc.Snapshot, Counter[str]]:
    dump.unlink(missing_ok=True)
    os.kill(pid, signal.SIGUSR1)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with contextlib.suppress(EOFError, pickle.UnpicklingError, FileNotFoundError):
            with dump.open("rb") as f:
                result: tuple[tracemalloc.Snapshot, Counter[str]] = pickle.load(f)  # our own file
            return result
        time.sleep(0.5)
    raise RuntimeError("no snapshot from the gateway")


async def measure(pid: int, url: str, key: str, streams: int, dump: Path, body: dict[str, Any]) -> dict[str, Any]:
    opened, stop = asyncio.Event(), asyncio.Event()
    warm = asyncio.create_task(hold_streams(url, key, 1, asyncio.Event(), stop, body))
    await asyncio.sleep(SETTLE_S)
    stop.set()
    await warm
    await asyncio.sleep(SETTLE_S)
    rss0 = psutil.Process(pid).memory_info().rss
    before = await asyncio.to_thread(snapshot, pid, dump)
    stop = asyncio.Event()
    holding = asyncio.create_task(hold_streams(url, key, streams, opened, stop, body))
    await asyncio.wait_for(opened.wait(), 120)
    await asyncio.sleep(SETTLE_S)
    rss1 = psutil.Process(pid).memory_info().rss
    after = await asyncio.to_thread(snapshot, pid, dump)
    stop.set()
    served = await holding
    return {"before": before, "after": after, "rss_kb": (rss1 - rss0) / 1024 / streams, "served": served}


def report(result: dict[str, Any], streams: int, top: int) -> None:
    (snap0, counts0), (snap1, counts1) = result["before"], result["after"]
    filters = [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, "<frozen *>")]
    diff = snap1.filter_traces(filters).compare_to(snap0.filter_traces(filters), "lineno")
    heap = sum(d.size_diff for d in diff)
    print(
        f"\n{result['served']} streams open; Python heap per stream {heap / streams / 1024:.1f} KB, "
        f"RSS per stream {result['rss_kb']:.1f} KB\n"
    )
    print("| allocated at | bytes per stream | blocks per stream |\n|---|---|---|")
    for d in sorted(diff, key=lambda d: -d.size_diff)[:top]:
        frame = d.traceback[0]
        where = f"{Path(frame.filename).name}:{frame.lineno}"
        parent = "/".join(part for part in Path(frame.filename).parts[-3:-1])
        print(f"| {parent}/{where} | {d.size_diff / streams:,.0f} | {d.count_diff / streams:.1f} |")
    grown = Counter({k: counts1[k] - counts0.get(k, 0) for k in counts1})
    print("\n| object type | live objects per stream |\n|---|---|")
    for name, n in grown.most_common(top):
        if n / streams >= 0.5:
            print(f"| {name} | {n / streams:.1f} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--prompt-kb", type=int, default=0, help="a system prompt of this size in each request")
    parser.add_argument("--tree", type=Path, default=ROOT)
    parser.add_argument("--serve", nargs=2, metavar=("PORT", "DUMP"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(int(args.serve[0]), Path(args.serve[1]))
        return 0
    from bench.gateway_peers import setup_tokenway_redis

    tree = args.tree.resolve()
    work = Path(tempfile.mkdtemp(prefix="gateway-stream-memory-"))
    (work / "mock.js").write_text(PACED_MOCK_JS)
    mock_port, port = free_port(), free_port()
    dump = work / "snapshot.pickle"
    with private_redis(work) as (_, redis_url), contextlib.ExitStack() as stack:
        mock_log = stack.enter_context((work / "mock.log").open("wb"))
        node = subprocess.Popen(
            ["node", str(work / "mock.js"), str(mock_port), str(INTERVAL_MS), str(CHUNKS)],
            stdout=mock_log,
            stderr=subprocess.STDOUT,
        )
        stack.callback(node.wait)
        stack.callback(node.terminate)
        if not wait_port(mock_port, 10):
            print("gateway_stream_memory: mock upstream did not start")
            return 1
        os.environ["REDIS_URL"] = redis_url
        key, _ = setup_tokenway_redis(mock_port)
        env = {
            **os.environ,
            "PYTHONPATH": f"{tree}:{tree / 'platform'}",
            "REDIS_URL": redis_url,
            "TOKENWAY_SPOOL_DIR": str(work / "spool"),
        }
        gateway_log = stack.enter_context((work / "gateway.log").open("wb"))
        gateway = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(port), str(dump)],
            env=env,
            cwd=tree,
            stdout=gateway_log,
            stderr=subprocess.STDOUT,
        )
        stack.callback(gateway.wait)
        stack.callback(gateway.kill)  # a measuring process: no graceful drain of the held streams
        if not wait_port(port, 60):
            print("gateway_stream_memory: gateway did not start:", (work / "gateway.log").read_text()[-500:])
            return 1
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        result = asyncio.run(measure(gateway.pid, url, key, args.streams, dump, stream_body(args.prompt_kb)))
    report(result, args.streams, args.top)
    print(f"\nmachine load (1/5/15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(json.dumps({"reproduce": ".venv/bin/python -m bench.gateway_stream_memory --streams N [--prompt-kb K]"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
