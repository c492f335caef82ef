"""Write a response over time: TTFT, per-chunk gaps, and the stream faults.

Frames with no delay between them are coalesced into one write, so zero-latency runs cost
one write per response instead of one per chunk.
"""

from __future__ import annotations

from aiohttp import web

from sim.clock import SimClock
from sim.draws import Draws
from sim.faults import Fault
from sim.perf import Timing
from sim.transport import drop

Frames = list[tuple[int, bytes]]
SSE_HEADERS = {"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache"}


class Pacer:
    """Sleeps of one response: gaps between chunks, slowed by a slow_drip fault."""

    def __init__(self, clock: SimClock, timing: Timing, draws: Draws, slow: float) -> None:
        self.clock, self.timing, self.draws, self.slow = clock, timing, draws, slow

    def gap(self, tokens: int) -> float:
        if not tokens or self.clock.zero:
            return 0.0
        return self.timing.gap(tokens, self.draws) * self.slow


async def stream(
    request: web.Request, frames: Frames, tail: int, pacer: Pacer, fault: Fault | None, headers: dict[str, str]
) -> web.StreamResponse:
    kind = fault.kind if fault else ""
    response = web.StreamResponse(status=200, headers={**headers, **SSE_HEADERS})
    if kind == "stall_before_first_token":
        await response.prepare(request)
        await pacer.clock.sleep(fault.stall_s if fault else 0.0)
    await pacer.clock.sleep(pacer.timing.ttft_s)
    if not response.prepared:
        await response.prepare(request)
    cut = len(frames) - tail if kind == "stream_cut" else -1
    stall_at = len(frames) // 2 if kind == "stall_mid_stream" else -1
    buffer = bytearray()
    try:
        for index, (tokens, data) in enumerate(frames):
            if index == cut:
                await response.write(bytes(buffer))
                drop(request, reset=False)
                return response
            gap = pacer.gap(tokens)
            if (gap > 0 or index == stall_at) and buffer:
                await response.write(bytes(buffer))
                buffer.clear()
            if index == stall_at and fault:
                await pacer.clock.sleep(fault.stall_s)
            await pacer.clock.sleep(gap)
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
    await pacer.clock.sleep(delay)
    response = web.StreamResponse(status=200, headers={**headers, "Content-Type": "application/json"})
    response.content_length = len(body)
    await response.prepare(request)
    if kind == "stream_cut":
        await response.write(body[: len(body) // 2])
        drop(request, reset=False)
        return response
    await response.write(body)
    await response.write_eof()
    return response
