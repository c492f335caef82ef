"""The relay's upstream read (routing.upstream.reads) behaves as aiohttp's readany(): the same bytes in the
same order, b"" at the end, the same error when the provider's connection is cut, and reading paused
for backpressure starts again once the relay catches up. Upstream: a chunked HTTP/1.1 server on loopback
whose writes the test makes one by one."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import aiohttp
import pytest

from routing.upstream.reads import BufferedReads

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
Reader = Callable[[aiohttp.ClientResponse], Callable[[], Awaitable[bytes]]]
READERS: dict[str, Reader] = {
    "readany": lambda response: response.content.readany,
    "buffered": lambda response: BufferedReads(response.content).read,
}


class Upstream:
    """Answers one request with a chunked body written by the test."""

    def __init__(self) -> None:
        self.connected = asyncio.Event()
        self.writer: asyncio.StreamWriter | None = None

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(HEAD)
        self.writer = writer
        self.connected.set()

    def chunk(self, data: bytes) -> None:
        assert self.writer is not None
        self.writer.write(b"%x\r\n%s\r\n" % (len(data), data))

    def end(self) -> None:
        assert self.writer is not None
        self.writer.write(b"0\r\n\r\n")

    def cut(self) -> None:
        assert self.writer is not None
        self.writer.transport.abort()


@pytest.fixture
async def opened() -> AsyncIterator[Callable[..., Awaitable[tuple[Upstream, aiohttp.ClientResponse]]]]:
    upstream = Upstream()
    server = await asyncio.start_server(upstream.serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    sessions: list[aiohttp.ClientSession] = []

    async def open_stream(read_bufsize: int = 2**16) -> tuple[Upstream, aiohttp.ClientResponse]:
        session = aiohttp.ClientSession(read_bufsize=read_bufsize)
        sessions.append(session)
        response = await session.post(f"http://127.0.0.1:{port}/v1/chat/completions", data=b"{}")
        await upstream.connected.wait()
        return upstream, response

    yield open_stream
    for session in sessions:
        await session.close()
    server.close()
    await server.wait_closed()


async def read_until(read: Callable[[], Awaitable[bytes]], size: int) -> bytes:
    got = b""
    while len(got) < size:
        data = await asyncio.wait_for(read(), 5)
        assert data, f"EOF after {len(got)} of {size} bytes"
        got += data
    return got


@pytest.mark.parametrize("reader", READERS)
async def test_each_read_brings_what_arrived_and_the_end_reads_empty(opened, reader):
    upstream, response = await opened()
    read = READERS[reader](response)
    events = [b'data: {"n": %d}\n\n' % i for i in range(30)]
    for event in events[:10]:  # paced: one event, one read
        upstream.chunk(event)
        assert await asyncio.wait_for(read(), 5) == event
    for event in events[10:]:  # a burst: whatever the reads gather, in order
        upstream.chunk(event)
    assert await read_until(read, sum(map(len, events[10:]))) == b"".join(events[10:])
    upstream.end()
    assert await asyncio.wait_for(read(), 5) == b""
    assert await asyncio.wait_for(read(), 5) == b""  # and stays ended


@pytest.mark.parametrize("reader", READERS)
async def test_a_cut_connection_fails_the_read_as_readany_does(opened, reader):
    upstream, response = await opened()
    read = READERS[reader](response)
    upstream.chunk(b"data: {}\n\n")
    assert await asyncio.wait_for(read(), 5) == b"data: {}\n\n"
    upstream.cut()
    with pytest.raises(aiohttp.ClientPayloadError):
        while True:  # a read may still return bytes that arrived before the cut
            await asyncio.wait_for(read(), 5)


@pytest.mark.parametrize("reader", READERS)
async def test_reading_paused_for_backpressure_starts_again(opened, reader):
    # read_bufsize 64: aiohttp pauses the connection above 128 buffered bytes or 4 unread HTTP chunks
    upstream, response = await opened(read_bufsize=64)
    read = READERS[reader](response)
    protocol = response.content._protocol
    events = [b'data: {"token": "%03d"}\n\n' % i for i in range(40)]
    for event in events:
        upstream.chunk(event)
    for _ in range(500):  # the loop delivers the burst while the relay is busy elsewhere
        if protocol._reading_paused:
            break
        await asyncio.sleep(0)
    assert protocol._reading_paused
    assert await read_until(read, sum(map(len, events))) == b"".join(events)
    assert not protocol._reading_paused
    upstream.chunk(b"data: [DONE]\n\n")
    assert await asyncio.wait_for(read(), 5) == b"data: [DONE]\n\n"


async def test_a_long_paced_stream_keeps_its_bookkeeping_small_and_never_pauses(opened):
    upstream, response = await opened(read_bufsize=64)
    read = BufferedReads(response.content).read
    content = response.content
    for i in range(300):
        event = b'data: {"n": %d}\n\n' % i
        upstream.chunk(event)
        assert await asyncio.wait_for(read(), 5) == event
        assert not content._protocol._reading_paused
        assert len(content._http_chunk_splits or ()) <= 2
    assert content._size == 0
    assert content.total_bytes == sum(len(b'data: {"n": %d}\n\n' % i) for i in range(300))
