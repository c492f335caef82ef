"""The rest of a stream whose client left: read, not forwarded, for the provider's final usage.

A provider keeps generating after the caller hangs up (the simulator does; so do providers whose
usage arrives only in the stream's last event), and bills what it generated. Reading the stream to its
end is the only way to learn that number from the wire, so the provider cost is booked as the provider
will bill it. The read is bounded like any stream: the idle gap and the call's deadline.
"""

from __future__ import annotations

import asyncio
import logging
import time

from routing.http.sse import SseEvent, SseSplitter
from routing.translate.stream_base import StreamConverter
from routing.upstream.attempt import ATTEMPT_ERRORS, Opened
from routing.usage.answer_facts import AnswerFacts

log = logging.getLogger("routing.handoff.drain")


async def drain(
    opened: Opened, converter: StreamConverter, facts: AnswerFacts, *, idle_s: float, deadline: float
) -> bool:
    """Feed the converter (its output dropped) until the upstream's terminal event, EOF, an idle gap
    or the deadline (``time.monotonic()``). True when the stream ended whole."""
    splitter = SseSplitter()  # an event split at the cut is dropped: only the tail (usage) matters
    try:
        while not converter.done:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            async with asyncio.timeout(min(idle_s, remaining)):
                chunk = await opened.response.content.readany()
            if not chunk:
                return converter.done
            events = splitter.feed(chunk)
            facts.observe(events)
            for event in events:
                _feed(converter, event)
    except ATTEMPT_ERRORS as exc:
        log.info("drain ended early: %s: %s", type(exc).__name__, exc)
        return False
    return True


def _feed(converter: StreamConverter, event: SseEvent) -> None:
    try:
        converter.feed(event)
    except ValueError:  # a fragment of the event cut at the client's departure (orjson's error is one)
        log.debug("drain skipped a partial event of %d bytes", len(event.data))
