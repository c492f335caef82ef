"""Instructions per request and per paced chunk from ONE gateway process under callgrind, for CI's budget.

bench/gateway_instructions.py starts a gateway under valgrind twice per profile; under callgrind the
start-up alone (imports, catalog, first connections) costs ~2.7 billion instructions, ~30 s of a core,
more than the requests measured. Here one gateway serves every profile: for each, a warm-up, then
callgrind's counters are zeroed (``callgrind_control --zero PID``), a small phase and a large phase run,
each followed by a dump (``callgrind_control --dump``), and the difference of the two phases divided by
the extra requests (or extra paced chunks) is the figure. The two-phase difference removes what a phase
costs once (the client's new connections); what the idle gateway does per second (key and catalog
polls, ≈ 0.7 M instructions a second) is measured once (``IDLE_S`` of nothing) and taken out of each
phase for as long as it lasted: a loaded machine stretches a phase, and without that correction the
figure rose with the load (2-5 % per request at a load average of 10 on 2 cores).

Profiles: ``short`` and ``realistic`` as in bench/gateway_instructions.py, and ``paced``: streams from
the paced mock (one chunk per ``PACED_INTERVAL_MS``, each chunk a read of its own), ``PACED_CHUNKS``
content chunks per stream in the two phases, counted per extra relayed chunk. The gateway runs with
``PYTHONHASHSEED=0`` so dict and set orders repeat from run to run.

    .venv/bin/python -m bench.gateway_instruction_phases [--profile short,realistic,paced]
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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp

from bench.gateway_instructions import START_TIMEOUT_S, bodies, drive
from bench.gateway_load import process, wait_port
from bench.gateway_realistic import long_prompt, private_redis, publish
from bench.gateway_scale_js import PACED_MOCK_JS
from bench.gateway_upstreams import MOCK_JS, ROOT
from devtools.ports import free_port

PROFILES = ("short", "realistic", "paced")
WARM = 20  # requests (or paced streams' worth) before the counters are zeroed
REQUESTS = (40, 200)  # short and realistic: requests in the small and the large phase
PACED_STREAMS, PACED_CONCURRENCY = 10, 2
PACED_CHUNKS = (10, 60)  # content chunks per paced stream in the small and the large phase
PACED_INTERVAL_MS = 20
IDLE_S = 5.0  # the idle gateway measured this long, to take its polls out of each phase
CATALOG_SWITCH_S = 30.0  # the gateway polls the catalog version every 0.2 s; valgrind slows it down
UNITS = {"short": "request", "realistic": "request", "paced": "relayed chunk"}
PACED_CONTENT = re.compile(rb'"content":\s*"t\d')  # the paced mock's token chunks ("t<timestamp> ")


class Callgrind:
    """One gateway under callgrind; ``count(work)`` runs ``work`` and returns the instructions it took."""

    def __init__(self, pid: int, out: Path) -> None:
        self.pid, self.out, self.dumps = pid, out, 0

    def _control(self, *args: str) -> None:
        # always with the pid: without one, callgrind_control acts on every callgrind process of the machine
        subprocess.run(["callgrind_control", *args, str(self.pid)], check=True, capture_output=True, timeout=120)

    def zero(self) -> None:
        self._control("--zero")

    def dump(self) -> int:
        """Instructions since the last zero or dump (callgrind writes ``<out>.<n>`` and zeroes its counters)."""
        self._control("--dump")
        self.dumps += 1
        path = self.out.with_name(f"{self.out.name}.{self.dumps}")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if path.exists():
                total = re.search(rb"^(?:summary|totals): (\d+)", path.read_bytes(), re.M)
                if total:
                    return int(total.group(1))
            time.sleep(0.1)
        raise RuntimeError(f"callgrind wrote no dump {path}")


@contextlib.contextmanager
def gateway(env: dict[str, str], work: Path) -> Iterator[tuple[Callgrind, str]]:
    port = free_port()
    out = work / "callgrind.out"
    command = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={out}",
        sys.executable,
        "-m",
        "routing",
        "--port",
        str(port),
    ]
    with process(command, env=env, log=work / "gateway.log") as proc:
        if not wait_port(port, START_TIMEOUT_S):
            raise RuntimeError(f"gateway did not start under valgrind: {(work / 'gateway.log').read_text()[-300:]}")
        yield Callgrind(proc.pid, out), f"http://127.0.0.1:{port}/v1/chat/completions"


def idle_rate(meter: Callgrind) -> float:
    """Instructions per second of the gateway serving nothing (its polls and timers), over ``IDLE_S``."""
    meter.zero()
    started = time.monotonic()
    time.sleep(IDLE_S)  # the time is what is measured
    return meter.dump() / (time.monotonic() - started)


def phases(meter: Callgrind, run: Any, small: int, large: int, idle_per_s: float) -> tuple[int, int]:
    """Instructions of ``run(small)`` and of ``run(large)``, counted from a zeroed counter each, less the
    idle gateway's own work for as long as each phase lasted (a loaded machine stretches a phase)."""
    meter.zero()
    started = time.monotonic()
    run(small)
    first = meter.dump()
    middle = time.monotonic()
    run(large)
    second = meter.dump()
    ended = time.monotonic()
    print(f"    phases of {small} and {large}: {middle - started:.1f} s and {ended - middle:.1f} s", flush=True)
    return round(first - idle_per_s * (middle - started)), round(second - idle_per_s * (ended - middle))


def served(url: str, body: dict[str, Any], keys: list[str], count: int, concurrency: int = 10) -> None:
    done = asyncio.run(drive(url, json.dumps(body).encode(), keys, count, concurrency))
    if done != count:
        raise RuntimeError(f"{count - done} of {count} requests failed")


def paced_body(stream: dict[str, Any], chunks: int) -> dict[str, Any]:
    """The streamed short request asking the paced mock for ``chunks`` content chunks."""
    return {**stream, "max_tokens": 4096, "messages": [{"role": "user", "content": f"paced-chunks={chunks}"}]}


async def _probe(url: str, body: bytes, key: str) -> bytes:
    headers = {"content-type": "application/json", "authorization": f"Bearer {key}"}
    async with aiohttp.ClientSession() as session, session.post(url, data=body, headers=headers) as response:
        return await response.read()


def wait_for_paced_catalog(url: str, body: dict[str, Any], key: str) -> None:
    """Poll until the gateway relays the paced mock (it reloads the catalog on its version poll)."""
    probe = json.dumps(paced_body(body, 1)).encode()
    deadline = time.monotonic() + CATALOG_SWITCH_S
    while time.monotonic() < deadline:
        with contextlib.suppress(aiohttp.ClientError):
            if PACED_CONTENT.search(asyncio.run(_probe(url, probe, key))):
                return
        time.sleep(0.2)
    raise RuntimeError(f"the gateway did not switch to the paced upstream within {CATALOG_SWITCH_S:.0f}s")


def measure(profiles: list[str], tree: Path = ROOT, work: Path | None = None) -> dict[str, tuple[float, int, int]]:
    """Per profile: (instructions per request or chunk, small phase total, large phase total)."""
    work = work or Path(tempfile.mkdtemp(prefix="gateway-instruction-phases-"))
    (work / "mock.js").write_text(MOCK_JS)
    (work / "paced.js").write_text(PACED_MOCK_JS)
    mock_port, paced_port = free_port(), free_port()
    results: dict[str, tuple[float, int, int]] = {}
    all_bodies = bodies(long_prompt())
    with contextlib.ExitStack() as stack:
        _, redis_url = stack.enter_context(private_redis(work))
        stack.enter_context(process(["node", str(work / "mock.js"), str(mock_port)], log=work / "mock.log"))
        paced_mock = ["node", str(work / "paced.js"), str(paced_port), str(PACED_INTERVAL_MS), "0"]
        stack.enter_context(process(paced_mock, log=work / "paced.log"))
        if not (wait_port(mock_port, 10) and wait_port(paced_port, 10)):
            raise RuntimeError("mock upstreams did not start")
        keys, short_key = publish(redis_url, mock_port)
        env = {
            **os.environ,
            "PYTHONPATH": f"{tree}:{tree / 'platform'}",
            "REDIS_URL": redis_url,
            "TOKENWAY_SPOOL_DIR": str(work / "spool"),
            "PYTHONHASHSEED": "0",
        }
        meter, url = stack.enter_context(gateway(env, work))
        served(url, all_bodies["short"], [short_key], WARM)
        idle_per_s = idle_rate(meter)
        print(f"  idle: {idle_per_s:,.0f} instructions per second (taken out of each phase)", flush=True)
        for name in [p for p in profiles if p != "paced"]:  # the paced catalog last: one switch
            profile_keys = keys if name == "realistic" else [short_key]
            body = all_bodies[name]
            served(url, body, profile_keys, WARM)
            few, many = phases(meter, lambda n: served(url, body, profile_keys, n), *REQUESTS, idle_per_s)  # noqa: B023
            results[name] = ((many - few) / (REQUESTS[1] - REQUESTS[0]), few, many)
            print(f"  {name}: {results[name][0]:,.0f} instructions per request ({few:,} / {many:,})", flush=True)
        if "paced" in profiles:
            _, paced_key = publish(redis_url, paced_port)
            stream = all_bodies["stream"]
            wait_for_paced_catalog(url, stream, paced_key)

            def paced_streams(chunks: int) -> None:
                served(url, paced_body(stream, chunks), [paced_key], PACED_STREAMS, PACED_CONCURRENCY)

            paced_streams(PACED_CHUNKS[0])  # warm
            few, many = phases(meter, paced_streams, *PACED_CHUNKS, idle_per_s)
            extra = PACED_STREAMS * (PACED_CHUNKS[1] - PACED_CHUNKS[0])
            results["paced"] = ((many - few) / extra, few, many)
            print(
                f"  paced: {results['paced'][0]:,.0f} instructions per relayed chunk ({few:,} / {many:,})", flush=True
            )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default=",".join(PROFILES))
    parser.add_argument("--tree", type=Path, default=ROOT, help="checkout whose gateway is measured")
    args, _ = parser.parse_known_args(argv)
    results = measure(args.profile.split(","), args.tree.resolve())
    print("\n| profile | instructions per unit | small phase | large phase |\n|---|---|---|---|")
    for name, (per, few, many) in results.items():
        print(f"| {name} (per {UNITS[name]}) | {per:,.0f} | {few:,} | {many:,} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
