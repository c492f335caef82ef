"""CPU seconds of whole process trees, read from /proc: a process, its threads and every descendant.

A tree's CPU is the sum over its live members of utime + stime + cutime + cstime. A member that exits
is reaped by its parent, whose cutime/cstime then hold its whole life, so the difference of two readings
counts the children that came and went in between (PostgreSQL's per-connection backends, a prefork
pool's recycled children) as well as the ones still running.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import psutil

CLK_TCK = os.sysconf("SC_CLK_TCK")


def _own_cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    # fields[0] is the state (field 3); utime, stime, cutime, cstime are fields 14-17
    return sum(int(f) for f in fields[11:15]) / CLK_TCK


def tree_cpu_s(pid: int) -> float:
    """CPU seconds so far of ``pid`` and its descendants (0.0 when it is gone)."""
    try:
        members = [pid, *(child.pid for child in psutil.Process(pid).children(recursive=True))]
    except psutil.NoSuchProcess:
        return 0.0
    total = 0.0
    for member in members:
        try:
            total += _own_cpu_s(member)
        except (FileNotFoundError, ProcessLookupError):
            continue  # exited between the listing and the read: its parent's cutime has it next time
    return total


def postmaster_pid(pgdata: Path) -> int:
    """The PostgreSQL server's main process: the first line of ``postmaster.pid``."""
    return int((pgdata / "postmaster.pid").read_text().splitlines()[0])


def listening_pid(port: int) -> int | None:
    """The process listening on this loopback TCP port (the embedded Redis)."""
    for conn in psutil.net_connections(kind="tcp"):
        if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port and conn.pid:
            return conn.pid
    return None


@dataclass(frozen=True, slots=True)
class Window:
    seconds: float
    cpu_s: dict[str, float]  # group -> CPU seconds in the window

    def share(self, group: str) -> float:
        """The group's CPU as a share of one core."""
        return self.cpu_s.get(group, 0.0) / self.seconds


def measure(
    groups: Mapping[str, list[int]], seconds: float, *, tick: Callable[[], None] | None = None, tick_s: float = 1.0
) -> Window:
    """CPU of each group of process trees over ``seconds`` of wall time (``tick`` runs every ``tick_s``)."""

    def reading() -> dict[str, float]:
        return {name: sum(tree_cpu_s(pid) for pid in pids) for name, pids in groups.items()}

    before, start = reading(), time.monotonic()
    while (left := seconds - (time.monotonic() - start)) > 0:
        time.sleep(min(tick_s, left))
        if tick is not None:
            tick()
    after, took = reading(), time.monotonic() - start
    return Window(took, {name: after[name] - before[name] for name in groups})
