"""Child processes of the dev stack: each in its own session, each dying with its parent.

A terminal's Ctrl-C signals the whole foreground process group. Children started
here are session leaders, so they never see it: the parent alone decides the order
in which they stop. ``PR_SET_PDEATHSIG`` makes a child stop (SIGTERM) when its
parent is killed outright (``kill -9``), so nothing is left holding ports.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopRequest:
    """Ctrl-C, SIGTERM or SIGHUP: remember it; the main loop stops the children in order."""

    def __init__(self) -> None:
        self.requested = False
        self.at = 0.0
        for sig in STOP_SIGNALS:
            signal.signal(sig, self._handle)

    def _handle(self, signum: int, frame: object) -> None:
        if not self.requested:
            self.requested, self.at = True, time.monotonic()


def die_with_parent(parent: int) -> None:
    """SIGTERM to this process when ``parent`` dies (in a child: between fork and exec)."""
    if not sys.platform.startswith("linux"):
        return
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os.kill(os.getpid(), signal.SIGTERM)


def spawn(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    quiet: bool = False,
) -> subprocess.Popen[bytes]:
    parent = os.getpid()
    return subprocess.Popen(
        list(command),
        env=dict(env) if env is not None else None,
        cwd=cwd,
        stdout=subprocess.DEVNULL if quiet else None,
        start_new_session=True,
        preexec_fn=lambda: die_with_parent(parent),
    )


def terminate(process: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    """Ask a child to stop (its own handler drains); no-op when it is gone."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(sig)


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the child and everything in its session (e.g. a Celery pool) after a missed deadline."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)


def stop(process: subprocess.Popen[bytes], *, timeout: float) -> int | None:
    terminate(process)
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(process)
        return process.poll()
