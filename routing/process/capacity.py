"""How many open streams this process can hold: its file-descriptor ceiling, raised where allowed.

Each open stream holds two descriptors (the caller's socket and the upstream's), so the
soft RLIMIT_NOFILE, not a pool size, is the process's concurrency ceiling. At start the
gateway raises its soft limit to the hard limit (no privilege needed) and reports the
effective ceiling in ``/healthz`` and ``/metrics``.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

FDS_PER_STREAM = 2
RESERVED_FDS = 64  # Redis, listening sockets, logs, the spool, the event loop's own
NR_OPEN = Path("/proc/sys/fs/nr_open")  # the kernel's per-process maximum (Linux)

try:
    import resource
except ImportError:  # pragma: no cover - not on Linux/macOS
    resource = None  # type: ignore[assignment]


@dataclass(slots=True)
class OpenStreams:
    open: int = 0  # streams relaying now in this process


STREAMS = OpenStreams()


@dataclass(frozen=True, slots=True)
class FdCeiling:
    soft: int
    hard: int

    @property
    def streams(self) -> int:
        return max(0, (self.soft - RESERVED_FDS) // FDS_PER_STREAM)


def raise_fd_limit() -> FdCeiling:
    """Soft RLIMIT_NOFILE up to the hard limit (capped by the kernel's nr_open); the limits in force after."""
    if resource is None:  # pragma: no cover
        return FdCeiling(0, 0)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else _kernel_max()
    if soft != resource.RLIM_INFINITY and soft < target:
        with contextlib.suppress(ValueError, OSError):  # a sandbox refusing: keep what we were given
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return current_fd_limit()


def current_fd_limit() -> FdCeiling:
    if resource is None:  # pragma: no cover
        return FdCeiling(0, 0)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    infinite = resource.RLIM_INFINITY
    return FdCeiling(_kernel_max() if soft == infinite else soft, _kernel_max() if hard == infinite else hard)


def open_fds() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:  # pragma: no cover - no procfs
        return -1


def _kernel_max() -> int:
    try:
        return int(NR_OPEN.read_text())
    except (OSError, ValueError):
        return 1 << 20
