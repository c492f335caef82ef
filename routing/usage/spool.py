"""A local durable spool for usage events Redis could not take, kept until Redis confirms them.

Each gateway process appends to a segment file of its own under the spool folder and
holds an exclusive ``flock`` on it while it may still write there. The events of one
event-loop tick are written and fsync'd together (one fsync per batch, not per event).
``rotate`` closes the segment being written; any segment nobody holds a lock on (this
process's closed ones, or those of a process that crashed) can be ``claim``-ed, replayed
and ``done``: unlinked only after every event in it was confirmed by Redis.

Race: two processes claiming the same orphaned segment. The lock decides; the loser
skips it. A claimer that opened the file just before the winner unlinked it sees a link
count of 0 after locking and skips it too. A crash between the confirmed XADDs and the
unlink replays the segment again, which is harmless: metering applies a request id once.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

log = logging.getLogger("routing.spool")

SUFFIX = ".usage"


def spool_folder(base: str, redis_url: str) -> Path:
    """One sub-folder per Redis target: a segment is never replayed into another environment's Redis."""
    target = re.sub(r"[^A-Za-z0-9]+", "-", redis_url.split("@")[-1]).strip("-")
    return Path(base).expanduser().resolve() / target


@dataclass(slots=True)
class Claimed:
    """A segment this process holds the lock on; ``lines`` are its complete events."""

    path: Path
    fd: int
    lines: list[bytes]

    def done(self) -> None:
        """Every line was confirmed: remove the segment, then let go of the lock."""
        self.path.unlink(missing_ok=True)
        os.close(self.fd)

    def release(self) -> None:
        os.close(self.fd)


class UsageSpool:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._segment: BinaryIO | None = None
        self._segment_path: Path | None = None
        self._buffer: list[bytes] = []
        self._scheduled = False
        self.replay_rounds = 0  # replay attempts so far (routing.usage.replay): tests wait on it, not on time

    def append(self, payload: bytes) -> None:
        """Queue one event (a JSON line); this tick's events are written and fsync'd together."""
        self._buffer.append(payload)
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        self._scheduled = False
        batch, self._buffer = self._buffer, []
        if not batch:
            return
        try:
            segment = self._open_segment()
            segment.write(b"".join(line + b"\n" for line in batch))
            segment.flush()
            os.fsync(segment.fileno())
        except OSError as exc:  # disk full or gone: the events cannot be kept anywhere else
            log.error("usage spool write failed, %d events lost: %s", len(batch), exc)

    def _open_segment(self) -> BinaryIO:
        if self._segment is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self.folder / f"{os.getpid()}-{time.time_ns()}{SUFFIX}"
            segment = path.open("ab")
            fcntl.flock(segment.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            self._segment, self._segment_path = segment, path
        return self._segment

    def rotate(self) -> None:
        """Close the segment being written (its lock goes with it): it becomes claimable."""
        self.flush()
        if self._segment is not None:
            self._segment.close()
            self._segment = self._segment_path = None

    def segments(self) -> list[Path]:
        try:
            return sorted(p for p in self.folder.glob(f"*{SUFFIX}") if p != self._segment_path)
        except OSError:
            return []

    def claim(self, path: Path) -> Claimed | None:
        """Lock a segment nobody writes to or replays; None when another process has it or it is gone."""
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.fstat(fd).st_nlink == 0:  # replayed and removed by the process that held it
                raise BlockingIOError
            data = _read_all(fd)
        except OSError:  # BlockingIOError: locked by another process
            os.close(fd)
            return None
        # Every complete event ends with a newline; a torn last line (crash mid-write) is dropped.
        return Claimed(path, fd, [line for line in data.split(b"\n")[:-1] if line])


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)
