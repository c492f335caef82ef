"""The raw relay: a stream's chunks forwarded from the upstream's read callback to the caller's socket.

The relay task of routing.relay.answer wakes per upstream read: aiohttp buffers the bytes and sets a
future, the task resumes through its frames, reads, converts and awaits the server's ``send`` (a dict,
a coroutine). Here the work of one read is done inside aiohttp's parser callback
(routing.upstream.raw_reads): split into SSE events, observed for the answer facts, converted
(usage counted as bytes pass), and written to the caller's transport (routing.http.raw_out). The
relay task sleeps until the stream ends and wakes only for:

- the end: the upstream's terminal event (``converter.done``), its end of body (a cut when the terminal
  event never came: routing.relay.answer._finish), a cut connection (its aiohttp error);
- the output allowance passed (``OutputAllowancePassed``): nothing more is forwarded;
- backpressure: the caller's socket buffer is full; upstream reading is paused until it drains (the
  bytes of the read in hand are written first, one read's worth above the server's high-water mark);
- the idle gap and the deadline: one timer, re-armed from the last read when it fires (not per read).

The caller sees the same bytes as through the task path; the task path remains for what cannot be
hooked (another ASGI server, a reader with buffered bytes or paused reading).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Protocol

from routing.http.raw_out import RawOut
from routing.http.sse import SseEvent, SseSplitter
from routing.translate.stream_base import StreamConverter
from routing.upstream.raw_reads import hook, transport_of, unhook


class OutputAllowancePassed(Exception):
    """The stream's output passed what its hold priced: the gateway ends it (end state hold_exhausted)."""


class Delivery(Protocol):
    delivered: bool  # set once bytes reached the caller (routing.handoff.call.Call)


class RawPump:
    """The sink of one hooked upstream body (``data``, ``eof``, ``error`` run in aiohttp's callbacks)."""

    __slots__ = (
        "_call",
        "_converter",
        "_counted",
        "_cutoff",
        "_deadline_at",
        "_feed",
        "_idle_s",
        "_loop",
        "_observe",
        "_out",
        "_split",
        "_timer",
        "_upstream",
        "_waiter",
        "failure",
        "finished",
        "last",
        "paused",
    )

    def __init__(
        self,
        call: Delivery,
        converter: StreamConverter,
        out: RawOut,
        *,
        observe: Callable[[list[SseEvent]], None],
        counted: Callable[[], int],
        cutoff: int,
        idle_s: float,
        deadline: float,
    ) -> None:
        """``observe``: the answer facts' (routing.usage.answer_facts); ``counted``: the output counted so
        far (the usage tracker's estimate), checked against ``cutoff`` per read; ``deadline`` in
        ``time.monotonic()``."""
        loop = self._loop = asyncio.get_running_loop()
        self._call, self._converter, self._out, self._cutoff, self._idle_s = call, converter, out, cutoff, idle_s
        self._split: Callable[[bytes], list[SseEvent]] = SseSplitter().feed
        self._observe = observe
        self._feed = converter.feed
        self._counted = counted
        self._deadline_at = loop.time() + (deadline - time.monotonic())
        self._timer: asyncio.TimerHandle | None = None
        self._upstream: Any = None
        self._waiter: asyncio.Future[None] | None = None
        self.failure: BaseException | None = None
        self.finished = self.paused = False
        self.last = loop.time()

    # -- aiohttp's callbacks (never raise: they run inside its parser) --

    def data(self, chunk: bytes) -> None:
        if self.finished:
            return  # after the terminal event or a stop: what follows is not the caller's
        try:
            events = self._split(chunk)
            self._observe(events)  # upstream id, finish reason, thinking (routing.usage.answer_facts)
            feed = self._feed
            out = feed(events[0]) if len(events) == 1 else b"".join([feed(e) for e in events])
            if out:
                if self._out.write(out) and not self.paused:
                    self._pause()
                self._call.delivered = True
            if self._converter.done:
                self._end(None)
            elif self._counted() > self._cutoff:
                self._end(OutputAllowancePassed())
            else:
                self.last = self._loop.time()
        except BaseException as exc:  # noqa: BLE001  # a converter's error goes to the relay task, as on the task path
            self._end(exc)

    def eof(self) -> None:
        self._end(None)

    def error(self, exc: BaseException) -> None:
        self._end(exc)

    # -- the relay task's side --

    def _end(self, failure: BaseException | None) -> None:
        if self.finished:
            return
        self.finished, self.failure = True, failure
        self._wake()

    def _pause(self) -> None:
        self.paused = True
        self._upstream.pause_reading()
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _tick(self) -> None:
        now = self._loop.time()
        idle_end = self.last + self._idle_s
        if now >= idle_end or now >= self._deadline_at:
            self._timer = None
            self._end(TimeoutError())
            return
        self._timer = self._loop.call_at(min(idle_end, self._deadline_at), self._tick)

    async def run(self, content: Any, first: bytes) -> bool:
        """Relay ``first`` and the rest of ``content``; False (nothing done) when it cannot be hooked.
        Returns at the stream's end; raises what ended it otherwise (as the task path does)."""
        token = hook(content, self)
        if token is None:
            return False
        self._upstream = transport_of(content)
        try:
            self.data(first)
            self._tick()
            while not self.finished:
                if self.paused:
                    await self._out.drain()
                    self.paused = False
                    if not self.finished:
                        self._upstream.resume_reading()
                    continue
                waiter = self._waiter = self._loop.create_future()
                try:
                    await waiter
                finally:
                    self._waiter = None
        finally:
            self.finished = True  # a cancelled relay (the caller left) forwards nothing more
            if self._timer is not None:
                self._timer.cancel()
            unhook(content, token)
            if self.paused:
                self._upstream.resume_reading()  # the drain after a departure reads on (routing.handoff.drain)
        if self.failure is not None:
            raise self.failure
        return True
