"""Write a response over time: TTFT, per-chunk gaps, and the stream faults.

Timing model (the ground truth the evaluation measures, see docs/sim.md): the timeline
starts when the request arrives (or, when it had to queue for a slot, when it got one).
The first frame that carries output tokens leaves at the drawn TTFT, together with the
frames before it (role chunk, ``message_start``, ``ping``...). Every later frame that
carries k tokens leaves ``k / tokens_per_s`` (x gap jitter) after the previous one. Frames
are scheduled on absolute deadlines, so timer overshoot never accumulates, and frames with
no delay between them are coalesced into one write (one write per response at zero latency).
"""

from __future__ import annotations

import asyncio

from aiohttp import web

from sim.clock import SimClock
from sim.draws import Draws
from sim.faults import Fault
from sim.perf import Timing
from sim.transport import drop

Frames = list[tuple[int, bytes]]
SSE_HEADERS = {"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache"}


class Pacer:
    """Deadlines of one response, from ``start`` (a ``SimClock.stamp()``), slowed by slow_drip."""

    def __init__(self, clock: SimClock, timing: Timing, draws: Draws, slow: float, start: float) -> None:
        self.clock, self.timing, self.draws, self.slow = clock, timing, draws, slow
        self.due = start

    def gap(self, tokens: int) -> float:
        """Sim seconds between the previous token-carrying frame and one carrying ``tokens``."""
        if not tokens or self.clock.zero:
            return 0.0
        return self.timing.gap(tokens, self.draws) * self.slow

    async def wait(self, sim_seconds: float) -> None:
        """Move the deadline by ``sim_seconds`` and sleep to it."""
        self.due += self.clock.real(sim_seconds)
        await self.clock.sleep_until(self.due)


GONE_POLL_S = 0.02  # real seconds between looks for a caller that left during a stall
CLIENT_GONE = web.RequestKey("client_gone", bool)  # set when the caller left during a stall


def _gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


async def stall_unless_gone(request: web.Request, pacer: Pacer, sim_seconds: float) -> bool:
    """Wait out a stall; True as soon as the caller has closed the connection meanwhile (a provider
    stops working on a request whose client left)."""
    waiter = asyncio.ensure_future(pacer.wait(sim_seconds))
    try:
        while not waiter.done():
            if _gone(request):
                return True
            await asyncio.wait({waiter}, timeout=GONE_POLL_S)
    finally:
        waiter.cancel()
    return False


async def stream(
    request: web.Request, frames: Frames, tail: int, pacer: Pacer, fault: Fault | None, headers: dict[str, str]
) -> web.StreamResponse:
    kind = fault.kind if fault else ""
    response = web.StreamResponse(status=200, headers={**headers, **SSE_HEADERS})
    if kind == "stall_before_first_token":
        await response.prepare(request)
        if await stall_unless_gone(request, pacer, fault.stall_s if fault else 0.0):
            request[CLIENT_GONE] = True  # logged with the request (GET /_sim/requests)
            return response
    await pacer.wait(pacer.timing.ttft_s)
    if not response.prepared:
        try:
            await response.prepare(request)
        except ConnectionError:  # the caller left before the first byte (a hedge's loser, a cancelled call)
            request[CLIENT_GONE] = True
            return response
    cut = len(frames) - tail if kind == "stream_cut" else -1
    stall_at = len(frames) // 2 if kind == "stall_mid_stream" else -1
    buffer = bytearray()
    started = False  # has the first token-carrying frame been queued (it leaves at TTFT)?
    try:
        for index, (tokens, data) in enumerate(frames):
            if index == cut:
                await response.write(bytes(buffer))
                drop(request, reset=False)
                return response
            delay = pacer.gap(tokens) if started else 0.0
            started = started or tokens > 0
            if index == stall_at and fault:
                delay += fault.stall_s
            if delay > 0 and buffer:
                await response.write(bytes(buffer))
                buffer.clear()
            if delay > 0:
                await pacer.wait(delay)
            buffer += data
        await response.write(bytes(buffer))
        await response.write_eof()
    except ConnectionError:
        pass  # the client went away; nothing left to send to
    return response


async def plain(
    request: web.Request, body: bytes, pacer: Pacer, fault: Fault | None, headers: dict[str, str], output_tokens: int
) -> web.StreamResponse:
    kind = fault.kind if fault else ""
    delay = pacer.timing.ttft_s + pacer.timing.generation_s(output_tokens) * pacer.slow
    if kind in ("stall_before_first_token", "stall_mid_stream") and fault:
        delay += fault.stall_s
    await pacer.wait(delay)
    response = web.StreamResponse(status=200, headers={**headers, "Content-Type": "application/json"})
    response.content_length = len(body)
    try:
        await response.prepare(request)
        if kind == "stream_cut":
            await response.write(body[: len(body) // 2])
            drop(request, reset=False)
            return response
        await response.write(body)
        await response.write_eof()
    except ConnectionError:  # the caller left while we "generated" (e.g. a probe cut short at shutdown)
        pass
    return response
