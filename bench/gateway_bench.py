"""Gateway overhead: direct vs Tokenway vs a minimal Python pass-through vs LiteLLM vs Portkey.

Same machine, one fast mock upstream (Node, zero latency, 50-chunk streams). Each
gateway is pinned to core 0 (``taskset -c 0``); the load generator (wrk), the mock
upstream, Redis and this driver share core 1. Bounded: every load step runs a fixed
number of seconds, every probe a fixed number of requests. Peers that cannot be
installed or started are reported as "not available" with the reason.

    make bench                                   # all benchmarks (needs REDIS_URL: devstack)
    .venv/bin/python -m devtools.devstack test -- .venv/bin/python -m bench.gateway_bench [--seconds 5] [--only tokenway,direct]

Peers are installed under bench/.tools/ (git-ignored) on first use, by this script:
    python3.11 -m venv bench/.tools/litellm-venv && bench/.tools/litellm-venv/bin/pip install 'litellm[proxy]==1.108.7'
    bench/.tools/portkey: npm install of @portkey-ai/gateway@1.15.2 with overrides hono 4.9.7, @hono/node-server 1.13.5
    wrk: apt-get install wrk (when missing and running as root)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

from bench.gateway_load import WARM_MAX_STEPS, Target, failure_reason, measure, pinned, process, wait_port
from bench.gateway_peers import ensure_wrk, start_target
from bench.gateway_upstreams import GATEWAY_CORE, LOAD_CORE, MOCK_JS, TOOLS
from devtools.ports import free_port

# --- report -------------------------------------------------------------------------------------

ROWS = [
    ("req/s, c=50, non-streaming", "rps_c50", "{:,.0f}"),
    ("added p50 latency, c=1 (ms)", "add_p50_c1", "{:+.2f}"),
    ("added p99 latency, c=1 (ms)", "add_p99_c1", "{:+.2f}"),
    ("added p50 latency, c=10 (ms)", "add_p50_c10", "{:+.2f}"),
    ("added p99 latency, c=10 (ms)", "add_p99_c10", "{:+.2f}"),
    ("streams/s, c=10 (50 chunks)", "streams_c10", "{:,.0f}"),
    ("added TTFB, single stream (ms)", "add_ttfb", "{:+.2f}"),
    ("RSS idle (MB)", "rss_idle", "{:.0f}"),
    ("RSS loaded (MB)", "rss_loaded", "{:.0f}"),
    ("errors (non-2xx/socket)", "errors", "{:.0f}"),
    ("warm-up steps of 2 s at c=50 (until two agree within 5%)", "warm_steps", "{:.0f}"),
]


def derive(targets: list[Target]) -> None:
    """The added latencies: each target's figure minus direct's, where both were measured."""
    direct = next((t for t in targets if t.name == "direct" and not t.error), None)
    for target in targets:
        if direct is None or target is direct:
            continue
        for key in ("p50_c1", "p99_c1", "p50_c10", "p99_c10", "ttfb"):
            if key in target.results and key in direct.results:
                target.results[f"add_{key}"] = target.results[key] - direct.results[key]


CELL_REASON_CHARS = 70


def cell_text(target: Target, key: str, fmt: str) -> str:
    """A cell: the figure, or why there is none (the failure, in short; in full under the table)."""
    if target.error:
        return "n/a (not started)"
    base = key.removeprefix("add_")
    if target.name == "direct" and key.startswith("add_"):
        return "—"
    if key in target.results:
        return fmt.format(target.results[key])
    failure = target.failures.get(key) or target.failures.get(base)
    if failure:
        reason, exited, note = failure.partition(" (process exited)")
        short = reason if len(reason) <= CELL_REASON_CHARS else reason[: CELL_REASON_CHARS - 1] + "…"
        return f"failed: {short}{exited}{note}".replace("|", "/")
    if key.startswith("add_") and base in target.results:
        return "— (direct not measured)"
    return "—"


def table(targets: list[Target]) -> str:
    head = "| metric | " + " | ".join(t.name for t in targets) + " |"
    lines = [head, "|---" * (len(targets) + 1) + "|"]
    for label, key, fmt in ROWS:
        lines.append(f"| {label} | " + " | ".join(cell_text(t, key, fmt) for t in targets) + " |")
    notes = [f"- {t.name}: not available — {t.error}" for t in targets if t.error]
    for t in targets:
        reasons: dict[str, list[str]] = {}
        for key, reason in t.failures.items():
            reasons.setdefault(reason, []).append(key)
        notes += [f"- {t.name}: {', '.join(keys)} failed — {reason}" for reason, keys in reasons.items()]
    return "\n".join(lines + (["", *notes] if notes else []))


def measured(
    name: str, start: Callable[[], Target], seconds: float, workdir: Path, warm_max_steps: int = WARM_MAX_STEPS
) -> Target:
    """One target started and measured; whatever goes wrong becomes its error or its cells' failures."""
    try:
        target = start()
    except Exception as exc:  # noqa: BLE001 (a peer that cannot start is a column that says so)
        return Target(name, "", error=f"start failed: {failure_reason(exc, Target(name, ''))}")
    if not target.error:
        measure(target, seconds, workdir, warm_max_steps)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="duration of each load step")
    parser.add_argument("--only", default="direct,tokenway,tokenway-granian,python-passthrough,litellm,portkey")
    args, _ = parser.parse_known_args(argv)  # bench.run_all passes its arguments to every benchmark
    TOOLS.mkdir(parents=True, exist_ok=True)
    missing = ensure_wrk()
    if missing:
        print(f"gateway_bench: {missing}; nothing measured")
        return 0
    if not os.environ.get("REDIS_URL"):
        print("gateway_bench: REDIS_URL is not set; run through `make bench` (devstack)")
        return 1
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, {int(LOAD_CORE)})
    workdir = Path(tempfile.mkdtemp(prefix="gateway-bench-"))
    mock_js = workdir / "mock_upstream.js"
    mock_js.write_text(MOCK_JS)
    mock_port = free_port()
    targets: list[Target] = []
    with process(pinned(LOAD_CORE, ["node", str(mock_js), str(mock_port)]), log=workdir / "mock.log"):
        if not wait_port(mock_port, 10):
            print("gateway_bench: mock upstream did not start")
            return 1
        for name in args.only.split(","):
            with contextlib.ExitStack() as stack:
                target = measured(name, partial(start_target, name, mock_port, stack, workdir), args.seconds, workdir)
                targets.append(target)
                figures = json.dumps({k: round(v, 3) for k, v in target.results.items()})
                failed = f"; failed: {json.dumps(target.failures)}" if target.failures else ""
                print(f"  measured {name}: {target.error or figures + failed}", flush=True)
    derive(targets)
    cores = (
        f"gateway on core {GATEWAY_CORE}, load/mock/redis on core {LOAD_CORE}"
        if (os.cpu_count() or 1) > 1
        else "single core, unpinned"
    )
    print(f"\nGateway overhead ({cores}; {args.seconds:.0f}s per step; wrk; Node mock upstream)\n")
    print(table(targets))
    print(
        "\nreproduce: make bench   or   .venv/bin/python -m devtools.devstack test -- .venv/bin/python -m bench.gateway_bench"
    )
    (TOOLS).mkdir(parents=True, exist_ok=True)
    (TOOLS / "gateway_bench_results.json").write_text(json.dumps([t.__dict__ for t in targets], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
