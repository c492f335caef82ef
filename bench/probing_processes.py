"""The probing system as processes: the Celery beat, default worker and probe workers ``make run``
starts (the same command lines, ``devtools.runall``), with the simulated fleet and the demo catalog, at
the default cadence; their CPU read from /proc over a fixed window (``bench.probing_groups`` says what
is counted). Then the same tree without probing (beat without evaluation's entries, no probe workers):
the difference is what probing adds.

    PYTHONPATH=.:platform .venv/bin/python -m devtools.devstack test -- \\
        .venv/bin/python -m bench.probing_processes --json probing-bench.json

Uses its own database (``<DATABASE_URL's database>_probing_processes``, created afresh) and the Redis of
REDIS_URL (flushed). Compare with a running stack: ``bench.probing_live --bench probing-bench.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

import psutil
import psycopg
import redis

from bench.probing_groups import POSTGRES, REDIS, Reading, TaskCounters, process_groups, table, task_table
from bench.process_cpu import listening_pid, measure
from devtools.ports import free_port
from devtools.runall import _children
from devtools.supervisor import Child, Supervisor

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
WARMUP_S = 90  # past beat's start-up dispatch and refreshes, every worker's first tasks and imports
PROBING_OFF_APP = "bench.probing_off_app"  # the Celery app with evaluation's beat entries removed


def _fresh_database() -> str:
    url = os.environ["DATABASE_URL"]
    parts = urllib.parse.urlsplit(url)
    name = f"{parts.path.lstrip('/') or 'postgres'}_probing_processes"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return urllib.parse.urlunsplit(parts._replace(path=f"/{name}"))


def _manage(*args: str) -> None:
    subprocess.run([PY, str(ROOT / "manage.py"), *args], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)


def _postmaster(database_url: str) -> int:
    """The PostgreSQL server's main process: the parent of our own backend."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        row = conn.execute("SELECT pg_backend_pid()").fetchone()
    assert row is not None
    return int(psutil.Process(int(row[0])).ppid())


def _without_probing(children: list[Child]) -> list[Child]:
    out = []
    for child in children:
        if child.name.startswith("probe-"):
            continue
        if child.name == "beat":
            command = [PROBING_OFF_APP if part == "tokenway.celery" else part for part in child.command]
            child = Child(child.name, command, stage=child.stage, stop_timeout=child.stop_timeout, env=child.env)
        out.append(child)
    return out


def _run(
    label: str, children: list[Child], *, data: Path, seconds: float, client: redis.Redis, extra: dict[str, list[int]]
) -> Reading:
    supervisor = Supervisor(table=data / f"processes-{label}.json", cwd=ROOT, log=sys.stderr)
    try:
        for child in children:
            supervisor.add(child)
        deadline = time.monotonic() + WARMUP_S
        while time.monotonic() < deadline:
            supervisor.tick()
            time.sleep(0.5)
        pids = {c.name: c.process.pid for c in supervisor.children if c.process is not None}
        groups = {**process_groups(pids), **extra}
        before = TaskCounters.read(client)
        window = measure(groups, seconds, tick=supervisor.tick)
        tasks = TaskCounters.read(client).minus(before)
        restarts = sum(c.restarts for c in supervisor.children)
        if restarts:
            print(f"warning: {restarts} restarts during {label}", file=sys.stderr)
        return Reading(label, window, tasks)
    finally:
        supervisor.stop_all()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--window", type=float, default=180.0, help="seconds measured (after a 90 s warm-up)")
    parser.add_argument("--json", type=Path, help="write the readings here (for bench.probing_live --bench)")
    parser.add_argument("--skip-baseline", action="store_true", help="only the tree with probing")
    args = parser.parse_args()
    database_url = _fresh_database()
    data = Path(tempfile.mkdtemp(prefix="tw-probing-"))
    sim_port = free_port()
    os.environ.pop("PGOPTIONS", None)  # the test servers' synchronous_commit=off: make run commits durably
    os.environ.update(
        TOKENWAY_ENV="development",
        DATABASE_URL=database_url,
        TOKENWAY_DATA_DIR=str(data),
        SIM_PORT=str(sim_port),
        PYTHONPATH=f"{ROOT}:{ROOT / 'platform'}",
    )
    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    client.flushdb()
    for step in (
        ("migrate", "--noinput", "-v", "0"),
        ("load_catalog", str(ROOT / "demo" / "catalog.yaml")),
        ("publish_snapshots",),
    ):
        _manage(*step)
    redis_port = urllib.parse.urlsplit(os.environ["REDIS_URL"]).port or 6379
    extra = {POSTGRES: [_postmaster(database_url)], REDIS: [p for p in [listening_pid(redis_port)] if p]}
    every = _children(port=free_port(), sim_port=sim_port, beat_schedule=data / "celerybeat-schedule")
    children = [c for c in every if c.name not in ("web", "metering")]  # no probing work in them
    table_out = os.dup(1)
    os.dup2(2, 1)  # the children's banners go to stderr; the tables to stdout
    try:
        readings = [_run("bench, probing on", children, data=data, seconds=args.window, client=client, extra=extra)]
        if not args.skip_baseline:
            off = _without_probing(children)
            readings.append(_run("bench, probing off", off, data=data, seconds=args.window, client=client, extra=extra))
    finally:
        os.dup2(table_out, 1)
    print(f"\n## The probing system's processes: demo catalog, default cadence, {args.window:.0f} s window")
    print("\n".join(table(readings)))
    if len(readings) == 2:
        on, off_reading = readings
        added = on.counted_s() / on.window.seconds - off_reading.counted_s() / off_reading.window.seconds
        print(f"what probing adds (on - off): {added:.2%} of a core")
    print("\n".join(["", "Task bodies, probing on:", *task_table(readings[0])]))
    if args.json:
        args.json.write_text(json.dumps([r.as_json() for r in readings], indent=1))


if __name__ == "__main__":
    main()
