"""Server-sent events: split an upstream byte stream into events, frame events for the client."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class SseEvent:
    event: bytes | None
    data: bytes
    raw: bytes  # the event's bytes as received, with its terminating blank line


@dataclass(slots=True)
class SseSplitter:
    """Feed raw chunks, get complete events; tolerant of \\r\\n and of events split across chunks."""

    _buffer: bytes = b""

    def feed(self, chunk: bytes) -> list[SseEvent]:
        if not self._buffer:  # a paced stream's read is one event: the chunk itself
            # one data line: its only line feeds are the last two bytes, and no \r\n to normalise
            if (
                chunk.startswith(b"data: ")
                and chunk.find(b"\n") == len(chunk) - 2
                and chunk[-1] == 10
                and chunk[-3] != 13
            ):
                return [SseEvent(None, chunk[6:-2], chunk)]
            if (whole := _whole_event(chunk)) is not None:
                return [whole]
        buffer = self._buffer + chunk if self._buffer else chunk
        if buffer.find(b"\r") != -1:
            buffer = buffer.replace(b"\r\n", b"\n")
        parts = buffer.split(b"\n\n")
        self._buffer = parts.pop()
        events = []
        for part in parts:
            event = _single_data_line(part) or parse_event(part + b"\n\n")
            if event is not None:
                events.append(event)
        return events

    def rest(self) -> bytes:
        return self._buffer


def _whole_event(chunk: bytes) -> SseEvent | None:
    """``chunk`` as one event when it is exactly ``[event: name\\n]data: ...\\n\\n`` (what a provider
    writes per token), else None. Lines ending in ``\\r\\n`` take the general path (normalised there)."""
    if chunk[-2:] != b"\n\n" or chunk[-3:-2] == b"\r":
        return None
    if chunk.startswith(b"data: "):
        return SseEvent(None, chunk[6:-2], chunk) if chunk.find(b"\n") == len(chunk) - 2 else None
    if not chunk.startswith(b"event:"):
        return None
    end = chunk.find(b"\n")
    data_at = end + 1
    if chunk[end - 1] == 13 or not chunk.startswith(b"data: ", data_at) or chunk.find(b"\n", data_at) != len(chunk) - 2:
        return None
    return SseEvent(chunk[6:end].strip(), chunk[data_at + 6 : -2], chunk)


def _single_data_line(part: bytes) -> SseEvent | None:
    """Fast path for the common ``data: {...}`` event (one line, no event name)."""
    if part.startswith(b"data: ") and part.find(b"\n") == -1:
        return SseEvent(None, part[6:], part + b"\n\n")
    return None


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
