"""A local durable spool for usage events Redis could not take, kept until Redis confirms them.

Each gateway process appends to a segment file of its own under the spool folder and
holds an exclusive ``flock`` on it while it may still write there. The events of one
event-loop tick are written and fsync'd together (one fsync per batch, not per event).
``rotate`` closes the segment being written; any segment nobody holds a lock on (this
process's closed ones, or those of a process that crashed) can be ``claim``-ed, replayed
and ``done``: unlinked only after every event in it was confirmed by Redis.

A spool that cannot be written (disk full, folder gone or read-only) keeps what it could not write in
memory (``held``, bounded) and says so: ``writable`` is False until a write or the replay loop's probe
succeeds. While Redis is also failing (``redis_failing``), ``refusing`` is True and the gateway answers
new paid calls 503 instead of answering calls it could not bill (docs/billing.md). The request path
reads only these flags; the filesystem is probed by the replay loop, once a round.

Race: two processes claiming the same orphaned segment. The lock decides; the loser
skips it. A claimer that opened the file just before the winner unlinked it sees a link
count of 0 after locking and skips it too. A crash between the confirmed XADDs and the
unlink replays the segment again, which is harmless: metering applies a request id once.
"""

from __future__ import annotations

import asyncio
import contextlib
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
PROBE_PREFIX = ".probe-"  # + pid: written, fsync'd and removed by each probe; never a segment (no SUFFIX)
# Events kept in memory while neither Redis nor the spool takes them. New paid work is refused from the
# first of them, so only calls already under way add more; the bound is against a bug, not load.
MAX_HELD = 100_000


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
        self.replay_rounds = 0  # replay attempts so far (routing.handoff.replay): tests wait on it, not on time
        self.writable = True  # the last write or probe succeeded (probed at start; see probe())
        self.redis_failing = False  # the last hand-off went to the spool; cleared when Redis answers again
        self.held: list[bytes] = []  # events neither Redis nor the disk took yet: replayed from memory
        self.write_failures = 0  # writes that failed since start (a metric)
        self.lost = 0  # events dropped beyond MAX_HELD (a metric; must stay 0)
        self.probe()

    @property
    def refusing(self) -> bool:
        """Neither Redis nor the spool can take a usage event now: no new paid work (one attribute read)."""
        return self.redis_failing and not self.writable

    def state(self) -> dict[str, object]:
        return {"writable": self.writable, "redis_failing": self.redis_failing, "refusing": self.refusing,
                "held": len(self.held), "write_failures": self.write_failures, "lost": self.lost}  # fmt: skip

    def probe(self) -> bool:
        """Can a segment be written here now? Creates, fsyncs and removes a small file; sets ``writable``.
        Blocks for the fsync (≈ 10 ms, 20+ on a busy disk): at start only; the replay loop uses ``probe_off_loop``."""
        return self._probed(self._write_probe())

    async def probe_off_loop(self) -> bool:
        """``probe`` with the file work in a thread: its fsync would otherwise stall every call on the loop."""
        return self._probed(await asyncio.to_thread(self._write_probe))

    def _write_probe(self) -> OSError | None:
        """The filesystem part of a probe (no state touched: it may run in a thread)."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self.folder / f"{PROBE_PREFIX}{os.getpid()}"
            with path.open("wb") as probe:
                probe.write(b"probe\n")
                probe.flush()
                os.fsync(probe.fileno())
            path.unlink()
        except OSError as exc:
            return exc
        return None

    def _probed(self, exc: OSError | None) -> bool:
        if exc is not None:
            if self.writable:
                log.error("usage spool %s cannot be written: %s", self.folder, exc)
            self.writable = False
            return False
        self.writable = True
        if self.held:  # the disk is back before Redis: the events kept in memory become durable
            self._buffer[:0], self.held = self.held, []
            self.flush()
        return True

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
        except OSError as exc:  # disk full or gone: kept in memory, replayed to Redis from there
            self.write_failures += 1
            self.writable = False
            self._close_broken_segment()
            self.hold(batch)
            log.error("usage spool write failed, %d events held in memory: %s", len(batch), exc)
            return
        self.writable = True

    def hold(self, batch: list[bytes]) -> None:
        room = MAX_HELD - len(self.held)
        if len(batch) > room:
            self.lost += len(batch) - max(room, 0)
            log.critical("usage spool: %d events lost beyond %d held in memory", len(batch) - room, MAX_HELD)
        self.held.extend(batch[: max(room, 0)])

    def _close_broken_segment(self) -> None:
        """A segment a write failed on may hold a torn line: close it (a claimer drops the torn tail)."""
        if self._segment is not None:
            with contextlib.suppress(OSError):
                self._segment.close()
            self._segment = self._segment_path = None

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
