"""Writing a streamed body straight to the caller's connection, under uvicorn's httptools cycle.

``send_chunk`` costs per chunk a message dict, the server's ``send`` coroutine (its flow check, its
state checks, a list and a join). A stream whose response start went through ``send`` (so the server
chose chunked framing and wrote the head) can have its body chunks written by ``RawOut.write``: the
same bytes (``<size hex>\\r\\n<data>\\r\\n``) on the same transport, written synchronously so that
the upstream's read callback can forward a chunk without a task switch (routing.relay.raw). What the
server's send does per body message is kept: nothing is written once the caller is gone, and its
flow control (paused while the caller's socket buffer is full) is reported to the writer, which waits
on ``drain``. The stream's last message still goes through ``send`` (``end_stream``), so the server
completes the response (its keep-alive) itself.

Any other server (granian) or framing gives None, and the relay sends through ASGI messages.
"""

from __future__ import annotations

from uvicorn.protocols.http.httptools_impl import RequestResponseCycle

from routing.http.asgi_io import Send


class RawOut:
    __slots__ = ("_cycle", "_flow", "_transport")

    def __init__(self, cycle: RequestResponseCycle) -> None:
        self._cycle = cycle
        self._flow = cycle.flow
        self._transport = cycle.transport

    def write(self, data: bytes) -> bool:
        """Write one body chunk; True when the caller's buffer is full (wait on ``drain`` before more)."""
        if self._cycle.disconnected:
            return False  # as the server's send: the caller left, the bytes go nowhere
        self._transport.write(b"%x\r\n%b\r\n" % (len(data), data))
        return self._flow.write_paused

    async def drain(self) -> None:
        await self._flow.drain()  # set again by the server when the buffer drains or the connection is lost


def raw_out(send: Send) -> RawOut | None:
    """A direct writer for the body of the stream whose start ``send`` wrote, or None."""
    cycle = getattr(send, "__self__", None)
    if not isinstance(cycle, RequestResponseCycle) or type(cycle).send is not RequestResponseCycle.send:
        return None
    if not cycle.response_started or cycle.response_complete or not cycle.chunked_encoding:
        return None
    if cycle.scope["method"] == "HEAD":
        return None
    return RawOut(cycle)
