"""The dev stack's supervisor and its files: restart with backoff, stop in stage order, the process
table for /healthz, the running stack's URLs for management commands, a stale postmaster.pid."""

from __future__ import annotations

import json
import sys

import pytest

from devtools.supervisor import Child, Supervisor
from foundation.env import read_stack_env
from tests.waiting import wait_until

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]
CRASHER = [sys.executable, "-c", "raise SystemExit(3)"]
# prints when it gets SIGTERM, so the order of stopping is visible in one file; <file>.<name>.ready once it listens
RECORDER = [sys.executable, "-c", (
    "import signal, sys, time\n"
    "def bye(*_):\n    open(sys.argv[1], 'a').write(sys.argv[2] + '\\n'); sys.exit(0)\n"
    "signal.signal(signal.SIGTERM, bye)\n"
    "open(sys.argv[1] + '.' + sys.argv[2] + '.ready', 'w').close()\n"
    "while True: time.sleep(0.05)\n"
)]  # fmt: skip


def _wait(predicate, timeout: float = 10.0) -> None:
    wait_until(predicate, timeout=timeout, message="the supervisor did not reach the expected state")


def test_a_crashed_child_is_restarted_with_backoff_and_counted(tmp_path):
    supervisor = Supervisor(table=tmp_path / "processes.json", cwd=tmp_path, log=open(tmp_path / "log", "w"))  # noqa: SIM115
    supervisor.add(Child("crash", CRASHER, stage=0))
    supervisor.add(Child("steady", SLEEPER, stage=0))
    try:
        _wait(lambda: (supervisor.tick(), supervisor.children[0].restarts >= 2)[1])
        crash, steady = supervisor.children
        assert crash.failures >= 2 and steady.restarts == 0 and steady.running()
        rows = {row["name"]: row for row in json.loads((tmp_path / "processes.json").read_text())["processes"]}
        assert rows["steady"]["state"] == "running" and rows["crash"]["restarts"] >= 1
    finally:
        supervisor.stop_all()
    assert not (tmp_path / "processes.json").exists()
    assert "crash exited with status 3; restarting in 1s" in (tmp_path / "log").read_text()


def test_stop_goes_stage_by_stage(tmp_path):
    order = tmp_path / "order"
    supervisor = Supervisor(table=tmp_path / "processes.json", cwd=tmp_path, log=open(tmp_path / "log", "w"))  # noqa: SIM115
    for name, stage in (("sim", 4), ("web", 0), ("worker", 1), ("beat", 2)):
        supervisor.add(Child(name, [*RECORDER, str(order), name], stage=stage))
    names = [child.name for child in supervisor.children]
    wait_until(
        lambda: all(tmp_path.joinpath(f"order.{name}.ready").exists() for name in names),
        timeout=10,
        message="a recorder never installed its SIGTERM handler",
    )
    supervisor.stop_all()
    assert order.read_text().split() == ["web", "worker", "beat", "sim"]
    assert all(child.state == "stopped" for child in supervisor.children)


def test_stack_env_is_read_and_absent_means_empty(tmp_path):
    path = tmp_path / "stack.env"
    assert read_stack_env(path) == {}
    path.write_text("DATABASE_URL=postgresql://postgres:@/postgres?host=/x\nREDIS_URL=redis://127.0.0.1:1/0\n")
    assert read_stack_env(path)["DATABASE_URL"] == "postgresql://postgres:@/postgres?host=/x"
    assert read_stack_env(path)["REDIS_URL"] == "redis://127.0.0.1:1/0"


@pytest.mark.parametrize("content", ["", "1\n", f"{1}\n/elsewhere\n"])
def test_a_postmaster_pid_of_no_live_postgres_is_dropped(tmp_path, content):
    from devtools.devstack import _forget_stale_postmaster

    (tmp_path / "postmaster.pid").write_text(content)  # pid 1 is init, not our postgres
    _forget_stale_postmaster(tmp_path)
    assert not (tmp_path / "postmaster.pid").exists()
