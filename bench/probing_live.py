"""The probing system's CPU on a running ``make run`` tree, beside the benchmark's (``bench.probing_processes``).

    flock heavy.lock make run PORT=8107 SIM_PORT=8207 TOKENWAY_DATA_DIR=.data-probing &   # wait for the banner
    PYTHONPATH=.:platform .venv/bin/python -m bench.probing_live --data-dir .data-probing \\
        --bench probing-bench.json

Finds the stack's processes in ``<data dir>/processes.json`` (the supervisor's table), PostgreSQL's
server in ``<data dir>/pg/postmaster.pid`` and Redis by the port of ``stack.env``'s REDIS_URL; reads
their CPU from /proc over the window (``bench.probing_groups`` says what is counted) and the per-task
CPU counters from Redis at its start and end.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.parse
from pathlib import Path

import redis

from bench.probing_groups import POSTGRES, REDIS, Reading, TaskCounters, process_groups, table, task_table
from bench.process_cpu import listening_pid, measure, postmaster_pid
from foundation.env import read_stack_env

AGREEMENT = 0.20  # the benchmark stands for the running stack when their totals are this close


def live_reading(data: Path, seconds: float, label: str) -> Reading:
    processes = json.loads((data / "processes.json").read_text())["processes"]
    pids = {row["name"]: int(row["pid"]) for row in processes if row.get("pid")}
    stack = read_stack_env(data / "stack.env")
    redis_url = stack["REDIS_URL"]
    groups = process_groups(pids)
    groups[POSTGRES] = [postmaster_pid(data / "pg")]
    redis_pid = listening_pid(urllib.parse.urlsplit(redis_url).port or 6379)
    groups[REDIS] = [redis_pid] if redis_pid else []
    client = redis.Redis.from_url(redis_url)
    before = TaskCounters.read(client)
    window = measure(groups, seconds)
    return Reading(label, window, TaskCounters.read(client).minus(before))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True, help="the running stack's TOKENWAY_DATA_DIR")
    parser.add_argument("--window", type=float, default=180.0)
    parser.add_argument("--bench", type=Path, help="bench.probing_processes --json output, shown beside")
    parser.add_argument("--json", type=Path, help="write this reading here")
    args = parser.parse_args()
    live = live_reading(args.data_dir.resolve(), args.window, "running stack")
    readings = [live]
    if args.bench:
        readings = [Reading.from_json(raw) for raw in json.loads(args.bench.read_text())][:1] + readings
    print(f"\n## The probing system's processes on a running stack, {live.window.seconds:.0f} s window")
    print("\n".join(table(readings)))
    print("\n".join(["", "Task bodies on the running stack:", *task_table(live)]))
    if args.json:
        args.json.write_text(json.dumps([live.as_json()], indent=1))
    if len(readings) < 2:
        return 0
    bench, measured = readings
    ratio = (bench.counted_s() / bench.window.seconds) / (measured.counted_s() / measured.window.seconds)
    print(f"bench / running stack: {ratio:.2f} (agreement within {AGREEMENT:.0%}: {abs(ratio - 1) <= AGREEMENT})")
    return 0 if abs(ratio - 1) <= AGREEMENT else 1


if __name__ == "__main__":
    sys.exit(main())
