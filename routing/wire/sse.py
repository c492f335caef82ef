"""Server-sent events: split an upstream byte stream into events, frame events for the client."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class SseEvent:
    event: bytes | None
    data: bytes
    raw: bytes  # the event's bytes as received, with its terminating blank line


@dataclass(slots=True)
class SseSplitter:
    """Feed raw chunks, get complete events; tolerant of \\r\\n and of events split across chunks."""

    _buffer: bytes = b""
    _events: list[SseEvent] = field(default_factory=list)

    def feed(self, chunk: bytes) -> list[SseEvent]:
        buffer = self._buffer + chunk
        if b"\r" in buffer:
            buffer = buffer.replace(b"\r\n", b"\n")
        events: list[SseEvent] = []
        start = 0
        while True:
            end = buffer.find(b"\n\n", start)
            if end < 0:
                break
            event = parse_event(buffer[start : end + 2])
            if event is not None:
                events.append(event)
            start = end + 2
        self._buffer = buffer[start:]
        return events

    def rest(self) -> bytes:
        return self._buffer


def parse_event(raw: bytes) -> SseEvent | None:
    name: bytes | None = None
    data: list[bytes] = []
    for line in raw.split(b"\n"):
        if line.startswith(b"data:"):
            data.append(line[6:] if line[5:6] == b" " else line[5:])
        elif line.startswith(b"event:"):
            name = line[6:].strip()
    if not data and name is None:
        return None
    return SseEvent(name, b"\n".join(data), raw)


def frame(data: bytes, event: bytes | None = None) -> bytes:
    if event is None:
        return b"data: " + data + b"\n\n"
    return b"event: " + event + b"\ndata: " + data + b"\n\n"
