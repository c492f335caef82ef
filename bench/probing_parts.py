"""CPU of the probing work at a catalog of any size (1,000 offerings x 4 regions by default), performance
probes every 5 minutes: the parts model, in one process.

    PYTHONPATH=.:platform .venv/bin/python -m bench.probing_cost --offerings 1000   # 1000 x 4 (~10 min)
    PYTHONPATH=.:platform .venv/bin/python -m bench.probing_cost --offerings 100    # quicker

What it counts is the work itself (probes, writes, statistics, each with its PostgreSQL backend); not the
processes that carry it: Celery's own receiving, acknowledging and polling, beat, a PostgreSQL backend
started per task, the leaderboard pre-render after each refresh. Those are measured, with the work, as
whole processes by ``bench.probing_processes`` (``python -m bench.probing_cost`` without ``--offerings``).

Parts, each with this process's CPU and the CPU of its PostgreSQL backend (read from /proc):
- workers: one real 5-minute cycle through ``evaluation.runner.run_jobs`` against the simulated
  fleet in its own process (zero latency): a performance probe (2 streaming requests) per offering
  x region, plus 1/12 of the hourly probes (cache, price, capability, quality: one each per hour);
- writes: ``probe_results_save`` of that cycle (raw rows and their minute/hour/day rollups);
- aggregation: one statistics refresh (every window from the rollups, incidents from the last
  30 minutes of raw rows, the stats snapshot), times the 10 refreshes of a 5-minute cycle (every 30 s).
Simulated time (labelled in the table): the 7 days of rollup history the refresh reads and 25
minutes of raw performance rows before the cycle are synthesized in SQL with the shapes the write
path leaves (per hour and pair: 24 performance probes, one of each hourly kind).

Uses its own database (``<DATABASE_URL's database>_probing_bench``, created and migrated; its
evaluation tables are emptied at start) and the Redis of REDIS_URL.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import math
import os
import random
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import psycopg

_DEFAULT_DB = "postgresql://postgres@127.0.0.1:5432/postgres"


def _bench_database() -> str:
    """Create ``<db>_probing_bench`` next to DATABASE_URL's database and point DATABASE_URL at it."""
    url = os.environ.get("DATABASE_URL", _DEFAULT_DB)
    parts = urllib.parse.urlsplit(url)
    name = f"{parts.path.lstrip('/') or 'postgres'}_probing_bench"
    with psycopg.connect(url, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is None:
            conn.execute(f'CREATE DATABASE "{name}"')
    bench_url = urllib.parse.urlunsplit(parts._replace(path=f"/{name}"))
    os.environ["DATABASE_URL"] = bench_url
    return name


DB_NAME = _bench_database()
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tokenway.settings")
import django  # noqa: E402

django.setup()

import psutil  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from bench.probing_history import REGIONS, synthesize_history  # noqa: E402
from contracts import redis_keys  # noqa: E402
from contracts.snapshot import CatalogSnapshot  # noqa: E402
from devtools.ports import free_port  # noqa: E402
from evaluation.runner import Job, run_jobs  # noqa: E402
from evaluation.services.aggregate import WINDOWS, aggregates_refresh, window_end  # noqa: E402
from evaluation.services.incidents import incidents_detect  # noqa: E402
from evaluation.services.results import probe_results_save  # noqa: E402
from evaluation.services.snapshot import build_snapshot, snapshot_publish  # noqa: E402
from foundation.redis_client import get_redis  # noqa: E402
from tests.catalogs import sim_offerings  # noqa: E402

HOURLY_KINDS = ("cache", "price", "capability", "quality")
CYCLE_S = 300  # performance probes every 5 minutes
REFRESH_S = 30  # evaluation.stats_refresh every 30 s
BATCH = 200  # jobs per run_jobs call (a few worker tasks' worth)
REFRESHES = CYCLE_S // REFRESH_S  # statistics refreshes per cycle
CLK_TCK = os.sysconf("SC_CLK_TCK")


@dataclass
class Cost:
    ours_s: float = 0.0  # this process (user + system)
    pg_s: float = 0.0  # our PostgreSQL backend (user + system)
    wall_s: float = 0.0


def _pg_cpu() -> float:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime


def _measure(cost: Cost, fn: Callable[[], Any]) -> Any:
    process = psutil.Process()
    cpu0, pg0, wall0 = process.cpu_times(), _pg_cpu(), time.perf_counter()
    result = fn()
    cpu1, pg1 = process.cpu_times(), _pg_cpu()
    cost.ours_s += (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
    cost.pg_s += pg1 - pg0
    cost.wall_s += time.perf_counter() - wall0
    return result


# --- the real cycle ------------------------------------------------------------------------------


def _spawn_fleet() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    fleet = subprocess.Popen(
        [sys.executable, "-m", "sim", "--port", str(port), "--zero-latency"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base_url = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            with urllib.request.urlopen(f"{base_url}/_sim/health", timeout=2):
                return fleet, base_url
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the fleet did not start")


def cycle_jobs(n: int, rng: random.Random) -> list[Job]:
    """One 5-minute cycle per region: every offering's performance probe, 1/12 of the hourly probes."""
    jobs = [Job(i, "performance") for i in range(1, n + 1)]
    jobs += [Job(i, kind) for i in range(1, n + 1) for kind in HOURLY_KINDS if rng.random() < CYCLE_S / 3600]
    rng.shuffle(jobs)
    return jobs


def refresh_once(prices: dict[int, Any], moment: dt.datetime, *, full: bool = False) -> dict[str, float]:
    """One statistics refresh as evaluation.stats_refresh runs it; CPU seconds per step (ours + PG)."""
    steps: dict[str, float] = {}
    for window in WINDOWS:
        cost = Cost()
        _measure(cost, partial(aggregates_refresh, window=window, prices=prices, now=moment, full=full))
        steps[f"aggregates {window}"] = cost.ours_s + cost.pg_s
    cost = Cost()
    _measure(cost, lambda: incidents_detect(now=moment))
    steps["incidents"] = cost.ours_s + cost.pg_s
    cost = Cost()
    _measure(cost, lambda: snapshot_publish(client=get_redis(), snapshot=build_snapshot()))
    steps["snapshot"] = cost.ours_s + cost.pg_s
    return steps


def _progress(label: str, steps: dict[str, float]) -> None:
    print(f"  {label}: " + ", ".join(f"{k} {v:.2f}" for k, v in steps.items()), file=sys.stderr, flush=True)


def run_cycle(
    n: int, base_url: str, workers: Cost, writes: Cost, start: dt.datetime, measured: int
) -> tuple[int, int, dict[str, float], list[dict[str, float]]]:
    """The cycle's probes in REFRESHES slices, a statistics refresh after each of the first ``measured``
    (its clock advanced 30 s per slice, as the beat would run it), after a full refresh (the hourly one)."""
    base = [o for o in sim_offerings(base_url) if o.provider != "bargain-cloud"]
    synthetic = {i: replace(base[i % len(base)], offering_id=i) for i in range(1, n + 1)}
    catalog = CatalogSnapshot(version=1, generated_at=time.time(), offerings=tuple(synthetic.values()))
    get_redis().set(redis_keys.CATALOG_SNAPSHOT, catalog.to_json())
    prices = {i: o.prices for i, o in synthetic.items()}
    full = refresh_once(prices, start, full=True)
    _progress("full refresh", full)
    rng = random.Random(1)
    units = [(region, job) for region in REGIONS for job in cycle_jobs(n, rng)]
    rng.shuffle(units)
    refreshes, probes, rows = [], len(units), 0
    per_slice = math.ceil(len(units) / REFRESHES)
    for k in range(REFRESHES):
        piece = units[k * per_slice : (k + 1) * per_slice]
        for region in REGIONS:
            jobs = [job for r, job in piece if r == region]
            for first in range(0, len(jobs), BATCH):
                batch = jobs[first : first + BATCH]
                results = _measure(workers, partial(asyncio.run, run_jobs(batch, synthetic, region=region)))
                rows += _measure(writes, partial(probe_results_save, region=region, results=results))
        _progress(f"slice {k + 1}: workers", {"ours": workers.ours_s, "pg": workers.pg_s, "wall": workers.wall_s})
        _progress(f"slice {k + 1}: writes", {"ours": writes.ours_s, "pg": writes.pg_s, "wall": writes.wall_s})
        if k < measured:
            refreshes.append(refresh_once(prices, start + dt.timedelta(seconds=REFRESH_S * (k + 1))))
            _progress(f"refresh {k + 1}", refreshes[-1])
    return probes, rows, full, refreshes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--offerings", type=int, default=1000)
    parser.add_argument(
        "--measured-refreshes", type=int, default=REFRESHES, help="refreshes measured; their mean stands for all 10"
    )
    args = parser.parse_args()
    n, measured = args.offerings, min(args.measured_refreshes, REFRESHES)
    call_command("migrate", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE evaluation_proberesult, evaluation_proberollup, evaluation_aggregate, evaluation_incident, "
            "evaluation_rollupbackfill, evaluation_windowstate, evaluation_dirtyoffering"
        )
        cursor.execute("INSERT INTO evaluation_rollupbackfill (since, until, done_at) VALUES (now(), now(), now())")
    end = window_end(dt.datetime.now(tz=dt.UTC))
    t0 = time.perf_counter()
    history = synthesize_history(n, end)
    history_s = time.perf_counter() - t0
    fleet, base_url = _spawn_fleet()
    workers, writes = Cost(), Cost()
    try:
        fleet_cpu0 = psutil.Process(fleet.pid).cpu_times()
        probes, rows, full, refreshes = run_cycle(n, base_url, workers, writes, end + dt.timedelta(seconds=5), measured)
        fleet_cpu1 = psutil.Process(fleet.pid).cpu_times()
    finally:
        fleet.terminate()
        fleet.wait(10)
    fleet_s = (fleet_cpu1.user - fleet_cpu0.user) + (fleet_cpu1.system - fleet_cpu0.system)
    steps = {name: sum(r[name] for r in refreshes) * REFRESHES / len(refreshes) for name in refreshes[0]}
    full_s = sum(full.values())
    aggregation_s = sum(steps.values()) + full_s * CYCLE_S / 3600  # the hourly full refresh's share
    total = workers.ours_s + workers.pg_s + writes.ours_s + writes.pg_s + aggregation_s
    pairs = n * len(REGIONS)
    print(f"\n## Probing system CPU: {n} offerings x {len(REGIONS)} regions, performance probes every 5 min")
    print(
        f"reproduce: PYTHONPATH=.:platform .venv/bin/python -m bench.probing_cost --offerings {n}"
        f"{'' if measured == REFRESHES else f' --measured-refreshes {measured}'}"
        f"   (database {DB_NAME}; fleet in its own process, zero latency)"
    )
    print(
        f"simulated time: 7 days of rollups synthesized in SQL ({history['day rows']:,} day, {history['hour rows']:,} hour, "
        f"{history['minute rows']:,} minute rows) and {history['raw rows']:,} raw rows of the last 30 min, in {history_s:.0f} s; "
        "the cycle below is real"
    )
    print(
        "| part | what ran (per 5-minute cycle) | ours CPU s | PostgreSQL CPU s | CPU s per 5 min | share of one core |"
    )
    print("|---|---|---|---|---|---|")
    print(
        f"| workers | {probes:,} probes ({pairs:,} performance + hourly kinds' share), real fleet, wall {workers.wall_s:.0f} s "
        f"| {workers.ours_s:.1f} | {workers.pg_s:.1f} | {workers.ours_s + workers.pg_s:.1f} | {(workers.ours_s + workers.pg_s) / CYCLE_S:.1%} |"
    )
    print(
        f"| writes | {rows:,} raw rows + minute/hour/day rollups, wall {writes.wall_s:.1f} s "
        f"| {writes.ours_s:.1f} | {writes.pg_s:.1f} | {writes.ours_s + writes.pg_s:.1f} | {(writes.ours_s + writes.pg_s) / CYCLE_S:.1%} |"
    )
    detail = ", ".join(f"{name} {value:.1f}" for name, value in steps.items())
    full_detail = ", ".join(f"{name} {value:.1f}" for name, value in full.items())
    print(
        f"| aggregation | {REFRESHES} refreshes, one per 30 s of probes"
        f"{'' if measured == REFRESHES else f' (mean of the first {measured} x {REFRESHES})'} ({detail}); 1/12 of the hourly full "
        f"refresh ({full_s:.1f} s: {full_detail}) | | | {aggregation_s:.1f} | {aggregation_s / CYCLE_S:.1%} |"
    )
    print(f"| **total** | | | | **{total:.1f}** | **{total / CYCLE_S:.1%}** |")
    # With TOKENWAY_EVAL_LONG_WINDOW_REFRESH_S=300 the 24h and 7d windows are recomputed once per cycle; five
    # minutes after their last refresh nearly every offering changed, so that costs a full recompute.
    short = sum(v for k, v in steps.items() if not k.endswith(("24h", "7d")))
    long_s = full["aggregates 24h"] + full["aggregates 7d"]
    cadenced = short + long_s + (full["aggregates 15m"] + full["aggregates 1h"]) * CYCLE_S / 3600
    other = workers.ours_s + workers.pg_s + writes.ours_s + writes.pg_s
    print(
        f"| aggregation, long windows every 300 s (derived from the steps above) | 15m, 1h, incidents, snapshot "
        f"every 30 s ({short:.1f}); 24h and 7d once, in full ({long_s:.1f}) | | | {cadenced:.1f} | {cadenced / CYCLE_S:.1%} |"
    )
    print(
        f"| **total, long windows every 300 s** | | | | **{other + cadenced:.1f}** | **{(other + cadenced) / CYCLE_S:.1%}** |"
    )
    print(f"fleet CPU (not ours, the simulated providers): {fleet_s:.1f} s")
    print(
        "counted: the probing work in this process and its PostgreSQL backend; not counted: Celery and beat, "
        "per-task connections, the leaderboard pre-render (python -m bench.probing_cost without --offerings)"
    )


if __name__ == "__main__":
    main()
