"""Deadlines and limits at the socket, read once per process through the typed environment reader."""

from __future__ import annotations

from dataclasses import dataclass

from contracts.env import env_float, env_int
from routing.process.capacity import current_fd_limit


@dataclass(frozen=True, slots=True)
class SocketLimits:
    # From the first byte of a request (or the connection's opening) to the end of its headers; a
    # client dribbling a header line every few seconds (slowloris) is cut off here.
    header_timeout_s: float = 10.0
    # A body must arrive within ``body_timeout_s`` plus one second per ``body_min_rate`` bytes
    # received (Apache mod_reqtimeout's body=20,MinRate=500): a 10 MB body at 1 MB/s passes,
    # one byte every 5 s does not.
    body_timeout_s: float = 20.0
    body_min_rate: int = 500  # bytes per second
    keepalive_timeout_s: float = 5.0  # idle between two requests on one connection (uvicorn's default)
    max_headers: int = 100  # Apache's LimitRequestFields; SDKs send 10-25
    max_header_bytes: int = 64 * 1024  # request line + headers; routing.http.asgi_io.MAX_HEADER_BYTES
    max_url_bytes: int = 8 * 1024  # nginx's and Apache's default request-line limit (~8 KB)
    # Open connections per process; 0 = the process's stream ceiling, (fd limit - 64) / 2
    # (routing.process.capacity): past it a caller's connection could not get its upstream's descriptor.
    max_connections: int = 0

    @classmethod
    def from_env(cls) -> SocketLimits:
        d = _D
        return cls(
            header_timeout_s=env_float("TOKENWAY_HTTP_HEADER_TIMEOUT", d.header_timeout_s),
            body_timeout_s=env_float("TOKENWAY_HTTP_BODY_TIMEOUT", d.body_timeout_s),
            body_min_rate=env_int("TOKENWAY_HTTP_BODY_MIN_RATE", d.body_min_rate),
            keepalive_timeout_s=env_float("TOKENWAY_HTTP_KEEPALIVE_TIMEOUT", d.keepalive_timeout_s),
            max_headers=env_int("TOKENWAY_HTTP_MAX_HEADERS", d.max_headers),
            max_header_bytes=env_int("TOKENWAY_HTTP_MAX_HEADER_BYTES", d.max_header_bytes),
            max_url_bytes=env_int("TOKENWAY_HTTP_MAX_URL_BYTES", d.max_url_bytes),
            max_connections=env_int("TOKENWAY_HTTP_MAX_CONNECTIONS", d.max_connections),
        )

    def connection_cap(self) -> int:
        """``max_connections``, or the stream ceiling of the file-descriptor limit in force now."""
        return self.max_connections or max(1, current_fd_limit().streams)


_D = SocketLimits()
