"""A bare HTTP/1.1 client on a real socket for hostile-client tests: it sends exactly the bytes it is
given, as slowly as it is told, and reports what came back and when the server closed."""

from __future__ import annotations

import json
import select
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Answer:
    raw: bytes  # everything the server sent before it closed
    elapsed: float  # seconds from the client's first byte (or its connect) to the server's close
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    def json(self) -> Any:
        return json.loads(self.body)


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def parse(raw: bytes, elapsed: float) -> Answer:
    answer = Answer(raw, elapsed)
    if not raw:
        return answer
    head, _, answer.body = raw.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    answer.status = int(status_line.split(" ")[1])
    answer.headers = {name.strip().lower(): value.strip() for name, value in (line.split(":", 1) for line in lines)}
    return answer


def read_until_closed(sock: socket.socket, *, started: float, timeout: float) -> Answer:
    """Everything until the server's FIN (or a reset), at most ``timeout`` seconds from now."""
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([sock], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            return parse(b"".join(chunks), time.monotonic() - started)
        chunks.append(chunk)
    raise AssertionError(f"the server kept the connection open for {timeout:g}s; it sent {b''.join(chunks)[:200]!r}")


def read_response(sock: socket.socket) -> Answer:
    """One whole response on a connection that stays open (its Content-Length says where it ends)."""
    started, raw = time.monotonic(), b""
    while b"\r\n\r\n" not in raw or len(raw) < _response_length(raw):
        chunk = sock.recv(65536)
        if not chunk:
            break
        raw += chunk
    return parse(raw, time.monotonic() - started)


def _response_length(raw: bytes) -> int:
    head = raw.partition(b"\r\n\r\n")[0]
    lengths = [line.split(b":", 1)[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")]
    return len(head) + 4 + int(lengths[0]) if lengths else len(raw)


def send_slowly(sock: socket.socket, pieces: Iterable[bytes], *, every: float, timeout: float) -> Answer:
    """One piece every ``every`` seconds until the server answers or closes; what it sent by then."""
    started = time.monotonic()
    for piece in pieces:
        try:
            sock.sendall(piece)
        except (BrokenPipeError, ConnectionResetError):
            break
        ready, _, _ = select.select([sock], [], [], every)
        if ready:
            break
    return read_until_closed(sock, started=started, timeout=timeout)


def exchange(port: int, request: bytes, *, timeout: float = 5) -> Answer:
    """Send ``request`` at once and read until the server closes."""
    with connect(port) as sock:
        started = time.monotonic()
        sock.sendall(request)
        return read_until_closed(sock, started=started, timeout=timeout)
