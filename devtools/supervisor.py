"""The dev stack's process supervisor: restart with backoff, stop in order, a process table on disk.

A child that exits on its own is restarted after a growing delay (logged), so one
crashed process never takes the rest down. The table (name, pid, restarts, state)
is written to ``<data dir>/processes.json`` for ``/healthz``. Stopping goes stage by
stage (``Child.stage``): every child of a stage gets SIGTERM (Celery: warm shutdown,
running tasks finish), the next stage starts once they are gone or their deadline passed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from devtools.processes import kill_group, spawn, terminate

BACKOFF_FIRST_S = 1.0  # a crash loop slows down to one attempt per BACKOFF_MAX_S
BACKOFF_MAX_S = 30.0
STABLE_AFTER_S = 30.0  # running this long resets the backoff: the next crash is a new incident
TABLE_EVERY_S = 2.0  # how fresh /healthz's view of the processes is


@dataclass
class Child:
    name: str
    command: list[str]
    stage: int  # stop order: lower stops first
    stop_timeout: float = 10.0
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    restarts: int = 0
    failures: int = 0  # consecutive quick exits, for the backoff
    started_at: float = 0.0
    restart_at: float = 0.0
    state: str = "starting"

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def pid_text(self) -> str:
        return str(self.process.pid) if self.process else "-"

    def row(self) -> dict[str, object]:
        pid = self.process.pid if self.process else None
        return {"name": self.name, "pid": pid, "restarts": self.restarts, "state": self.state}


class Supervisor:
    def __init__(self, *, table: Path, cwd: Path, log: object = sys.stderr) -> None:
        self.children: list[Child] = []
        self.table = table
        self.cwd = cwd
        self.log = log
        self._table_written = 0.0

    def say(self, message: str) -> None:
        print(f"[supervisor] {message}", file=self.log, flush=True)  # type: ignore[call-overload]

    def add(self, child: Child) -> None:
        self.children.append(child)
        self._start(child)

    def _start(self, child: Child) -> None:
        child.process = spawn(child.command, env={**os.environ, **child.env}, cwd=self.cwd)
        child.started_at = time.monotonic()
        child.state = "running"

    def tick(self) -> None:
        """Restart what died (after its backoff); refresh the table now and then."""
        now = time.monotonic()
        for child in self.children:
            if child.state == "running" and not child.running():
                self._schedule_restart(child, now)
            elif child.state == "backoff" and now >= child.restart_at:
                child.restarts += 1
                self._start(child)
                self.say(f"{child.name} restarted (restart {child.restarts}, pid {child.pid_text()})")
        if now - self._table_written >= TABLE_EVERY_S:
            self.write_table()

    def _schedule_restart(self, child: Child, now: float) -> None:
        code = child.process.returncode if child.process else None
        child.failures = 1 if now - child.started_at >= STABLE_AFTER_S else child.failures + 1
        delay = min(BACKOFF_MAX_S, BACKOFF_FIRST_S * 2 ** (child.failures - 1))
        child.state, child.restart_at = "backoff", now + delay
        self.say(f"{child.name} exited with status {code}; restarting in {delay:.0f}s")
        self.write_table()

    def stop_all(self) -> None:
        """Stage by stage: SIGTERM, wait up to the stage's deadline, SIGKILL the stragglers."""
        took = []
        for stage in sorted({child.stage for child in self.children}):
            group = [child for child in self.children if child.stage == stage]
            started = time.monotonic()
            for child in group:
                child.state = "stopping"
                if child.process is not None:
                    terminate(child.process)
            self.write_table()
            deadline = started + max(child.stop_timeout for child in group)
            for child in group:
                self._await_exit(child, deadline)
            took.append(f"{'+'.join(child.name for child in group)} {time.monotonic() - started:.1f}s")
        self.table.unlink(missing_ok=True)
        if took:
            self.say(f"stopped in order: {', '.join(took)}")

    def _await_exit(self, child: Child, deadline: float) -> None:
        if child.process is not None:
            try:
                child.process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                # Celery's cold shutdown (SIGQUIT) cannot cancel a thread pool's tasks without a traceback;
                # an unacknowledged task goes back to its queue either way.
                self.say(f"{child.name} still busy after {child.stop_timeout:.0f}s; killed")
                kill_group(child.process)
        child.state = "stopped"

    def write_table(self) -> None:
        self._table_written = time.monotonic()
        body = {"supervisor_pid": os.getpid(), "updated_at": time.time(), "processes": [c.row() for c in self.children]}
        partial = self.table.with_suffix(".tmp")
        partial.write_text(json.dumps(body))
        partial.replace(self.table)  # readers never see half a file
