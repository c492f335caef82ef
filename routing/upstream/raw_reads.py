"""Taking a streamed upstream body as aiohttp's parser hands it over, without its StreamReader.

aiohttp's connection protocol parses the HTTP framing (chunked, content-length, until close, and any
content encoding) in C and hands the body to the response's ``StreamReader`` (``feed_data``,
``feed_eof``, ``set_exception``), which buffers it and wakes a reading task. ``hook`` turns that
reader into a ``_Hooked`` one for as long as a relay wants: the same object and state (so aiohttp's
own bookkeeping — the connection going back to the pool at the body's end, a cut connection's
error — runs as always), whose ``feed_data`` passes the bytes to a ``Sink`` at once instead of
buffering them. Nothing waits on the reader while it is hooked; ``unhook`` makes it aiohttp's again
(its buffer is empty: whatever came while hooked went to the sink), after which ``readany`` works as
before (routing.handoff.drain reads on that way after the caller left).

The sink is kept in the reader's ``_timer`` slot while hooked (a slotted class has no room for more
and a subclass may add none to be swapped in); the reader's read timer is a no-op (the session has no
read timeouts, routing.upstream.http_client) and is put back by ``unhook``. A reader that holds
buffered bytes, has paused reading, has seen its end or an error, or is not aiohttp's plain
``StreamReader`` is not hooked (``hook`` answers None) and is read the usual way.
"""

from __future__ import annotations

from typing import Any, Protocol

import aiohttp
from aiohttp.helpers import _EXC_SENTINEL


class Sink(Protocol):
    def data(self, chunk: bytes) -> None: ...  # must not raise: it runs inside aiohttp's parser

    def eof(self) -> None: ...

    def error(self, exc: BaseException) -> None: ...


class _Hooked(aiohttp.StreamReader):
    __slots__ = ()

    def feed_data(self, data: bytes, size: int = 0) -> bool:
        if data:
            self._timer.data(data)  # type: ignore[attr-defined]  # the sink, while hooked
        return False

    def feed_eof(self) -> None:
        sink = self._timer
        super().feed_eof()  # aiohttp's end of body: waiters, the eof callbacks (the connection's release)
        sink.eof()  # type: ignore[attr-defined]

    def set_exception(self, exc: BaseException, exc_cause: BaseException = _EXC_SENTINEL) -> None:
        super().set_exception(exc, exc_cause)
        self._timer.error(exc)  # type: ignore[attr-defined]

    def end_http_chunk_receiving(self) -> None:
        pass  # chunk boundaries matter only to readchunk(); the sink takes bytes as they come


def hook(content: aiohttp.StreamReader, sink: Sink) -> Any | None:
    """Send ``content``'s coming bytes to ``sink``; the token for ``unhook``, or None when not hooked."""
    if type(content) is not aiohttp.StreamReader:
        return None
    protocol = content._protocol
    if content._buffer or content._eof or content._exception is not None or content._waiter is not None:
        return None
    if getattr(protocol, "_reading_paused", True) or getattr(protocol, "transport", None) is None:
        return None
    timer = content._timer
    content._timer = sink  # type: ignore[assignment]
    content.__class__ = _Hooked
    return timer


def unhook(content: aiohttp.StreamReader, token: Any) -> None:
    """The reader is aiohttp's again (no-op when it is not hooked)."""
    if type(content) is _Hooked:
        content.__class__ = aiohttp.StreamReader  # type: ignore[assignment]  # narrowed by the check above
        content._timer = token


def transport_of(content: aiohttp.StreamReader) -> Any:
    """The upstream connection's transport (paused and resumed by the relay for backpressure)."""
    return content._protocol.transport
