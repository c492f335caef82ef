"""Reading a streamed upstream body: what the connection has buffered, one read per wake-up.

aiohttp's ``StreamReader.readany()`` does per read: a coroutine for the wait with its own future
and timer context, then four calls to take one buffered block, and ``resume_reading()`` on the
protocol even when reading was never paused (which feeds its parser an empty ``data_received``).
For a stream paced like tokens every chunk is a read of its own, so that is paid per chunk.

``BufferedReads.read`` is ``readany()`` for the common case, done in one frame: wait on the
reader's waiter (the same slot aiohttp's ``feed_data``, ``feed_eof`` and ``set_exception`` wake),
then take the one buffered block. Every other case goes to ``readany()`` itself: a stored
exception, a partly read block, more than one block, EOF, a closed connection, and the whole rest
of a stream whose reading was paused once (backpressure: the parser may then keep bytes back that
only aiohttp's resume path, run on each of its reads, feeds on; until the first pause it holds none
and the transport reads freely, so skipping that path changes nothing). The session has no
total or sock_read timeout (routing.upstream.http_client), so aiohttp's read timer is a no-op and skipping
it changes nothing; the relay's own timer bounds the wait. tests/routing/test_upstream_reads.py
holds it to ``readany()``: same bytes, EOF, cut connection, paused and resumed reading, bounded
chunk bookkeeping.
"""

from __future__ import annotations

import asyncio

import aiohttp


class BufferedReads:
    __slots__ = ("_content", "_general", "_loop", "_protocol")

    def __init__(self, content: aiohttp.StreamReader) -> None:
        self._content = content
        self._protocol = content._protocol
        self._loop = asyncio.get_running_loop()
        self._general = type(content) is not aiohttp.StreamReader  # an empty body's reader has its own rules

    async def read(self) -> bytes:
        """What the connection has buffered, waiting for some if nothing is; b"" at the end."""
        content = self._content
        if self._general or self._protocol._reading_paused:
            # Once paused, aiohttp's parser may hold bytes that only its resume path (run by readany on
            # every read) feeds on: the rest of this stream is read its way.
            self._general = True
            return await content.readany()
        buffer = content._buffer
        while not buffer:
            if content._eof or content._exception is not None or not self._protocol.connected:
                return await content.readany()
            waiter = content._waiter = self._loop.create_future()
            try:
                await waiter  # woken by new bytes, an HTTP chunk's end, EOF or the connection's error
            finally:
                content._waiter = None
        if len(buffer) != 1 or content._buffer_offset or content._exception is not None:
            return await content.readany()
        data = buffer.popleft()
        size = len(data)
        content._size -= size
        cursor = content._cursor = content._cursor + size
        splits = content._http_chunk_splits  # HTTP chunk ends behind the cursor are dropped, as aiohttp does
        while splits and splits[0] < cursor:
            splits.popleft()
        return data


TAIL_WAIT_S = 5.0  # how long a stream's connection waits for its body's end after the terminal event


def release_at_end(response: aiohttp.ClientResponse, wait_s: float = TAIL_WAIT_S) -> None:
    """A stream whose terminal event was relayed (``data: [DONE]``, ``message_stop``): its connection goes
    back to the pool for the next request once the body's end arrives — in a chunked body the ``0``
    chunk often comes in a read after the terminal event, and releasing before it closes the connection
    (aiohttp cannot reuse one mid-body). aiohttp releases it itself at the end of the body (its own eof
    callback); a body that does not end within ``wait_s`` is closed."""
    content = response.content
    if content.is_eof() or content.exception() is not None or response.closed:
        response.release()
        return
    response.content.on_eof(asyncio.get_running_loop().call_later(wait_s, response.close).cancel)
