"""uvicorn's httptools protocol with deadlines and limits at the socket (``limits.SocketLimits``).

A connection is in one phase at a time, with at most one timer of ours:

- ``IDLE``, from its opening to its first byte: closed silently after ``header_timeout_s`` (nothing
  was asked, so nothing is answered). Between two requests uvicorn's keep-alive timer rules instead,
  set to ``keepalive_timeout_s``.
- ``HEAD``, from a request's first byte to the end of its headers: 408 after ``header_timeout_s``;
  431 past ``max_header_bytes`` (414 when the URL is what is too long) or ``max_headers``.
- ``BODY``, until the body's last byte: 408 when it arrives slower than ``body_min_rate`` bytes/s
  beyond ``body_timeout_s``.
- ``APP``: the request is read; the application has it (its own deadlines apply).

Cost: a request that arrives in one read (nearly all) arms no timer of ours and is checked for
ASCII in one pass over the read; header sizes are summed only when the reads could hold a head over
the limit. Counted under callgrind: ≈ 8k instructions per keep-alive request more than uvicorn's
protocol, ≈ 0.4 % of the gateway's per-request total (docs/gateway.md).

A refusal writes its JSON answer, half-closes the socket, drains what the client still sends and
closes on its EOF or after ``LINGER_S`` (closing with unread bytes would send a reset that can
destroy the answer before the client reads it).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import operator
from typing import Any

import httptools
from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle
from uvicorn.server import ServerState

from routing.edge import refusal
from routing.edge.limits import SocketLimits
from routing.telemetry.metrics import EDGE_REFUSALS

IDLE, HEAD, BODY, APP, REFUSED = range(5)
_VALUE = operator.itemgetter(1)
LINGER_S = 2.0  # after a refusal: long enough for the client to read it, short enough to free the socket
ASCII_SCAN_MAX = 8192  # reads up to this long are scanned whole (~1 instruction a byte); a longer one: its head only
LIMITS = SocketLimits.from_env()  # once per process, like the gateway's own settings
log = logging.getLogger("tokenway.edge")


class Refused(Exception):
    """Raised from a parser callback to stop parsing a request that was just refused."""


class EdgeProtocol(HttpToolsProtocol):
    def __init__(
        self, config: Config, server_state: ServerState, app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:  # fmt: skip
        super().__init__(config, server_state, app_state, _loop)
        self.limits = LIMITS
        self.timeout_keep_alive = self.limits.keepalive_timeout_s  # type: ignore[assignment]
        self.url = b""
        self._phase = IDLE
        self._timer: asyncio.TimerHandle | None = None
        self._head_bytes = 0  # bytes of the reads that continued the current request's head (a lower bound)
        self._head_upper = 0  # bytes of every read that ended inside it (an upper bound, the current one aside)
        self._read_size = 0  # the read being parsed
        self._read_ascii = True  # ... is all ASCII
        self._head_ascii = True  # every earlier read of the current head was
        self._body_bytes = 0  # bytes of reads that ended inside its body
        self._body_since = 0.0

    # Connection

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        HttpToolsProtocol.connection_made(self, transport)
        cap = _connection_cap()
        if len(self.connections) > cap:
            self._refuse(refusal.server_busy(cap))
            return
        self._arm(self.limits.header_timeout_s)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        HttpToolsProtocol.connection_lost(self, exc)

    def data_received(self, data: bytes) -> None:
        phase = self._phase
        if phase == REFUSED:
            return  # draining until the client's EOF or LINGER_S
        self._unset_keepalive_if_required()
        self._read_size = size = len(data)
        # A read that may hold a head: is all of it ASCII (one C pass; the headers are joined only when not).
        # A body read is not scanned; a pipelined head that begins in one is checked header by header; nor is
        # a long read (a head with its body, a conversation of 32 KB+): its head's values are, when it ends.
        self._read_ascii = phase != BODY and size <= ASCII_SCAN_MAX and data.isascii()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
            return
        except httptools.HttpParserError as exc:
            if self._phase != REFUSED:
                self._refuse(_parser_refusal(exc))
            return
        if self._phase >= APP:  # nearly every read: it held a whole request
            return
        self._after_read(phase, size)

    def _after_read(self, phase_before: int, size: int) -> None:
        """The read ended inside a head or a body: count it, and arm the phase's deadline once."""
        if self._phase == HEAD:
            self._head_upper += size
            self._head_ascii = self._head_ascii and self._read_ascii
            if phase_before == HEAD:  # a read that began in an earlier request may hold its body's end
                self._head_bytes += size
                if self._head_bytes > self.limits.max_header_bytes:
                    self._refuse(self._head_overflow())
                    return
            if self._timer is None:
                self._arm(self.limits.header_timeout_s)
        elif self._phase == BODY:
            self._body_bytes += size
            if self._timer is None:  # the body's first incomplete read: its allowance starts now
                self._body_since = self.loop.time()
                self._arm(self.limits.body_timeout_s)

    def _head_overflow(self) -> refusal.Refusal:
        if len(self.url) > self.limits.max_url_bytes:
            return refusal.url_too_long(self.limits.max_url_bytes)
        return refusal.headers_too_large(self.limits.max_header_bytes)

    def handle_websocket_upgrade(self) -> None:
        self._disarm()
        self._phase = APP
        HttpToolsProtocol.handle_websocket_upgrade(self)

    # Parser callbacks

    def on_message_begin(self) -> None:
        HttpToolsProtocol.on_message_begin(self)
        self._phase = HEAD
        self._head_bytes = self._head_upper = 0
        self._head_ascii = True

    def on_headers_complete(self) -> None:
        if self._timer is not None:
            self._disarm()
        problem = self._head_problem()
        if problem is not None:
            self._refuse(problem)
            raise Refused
        self._phase = BODY
        self._body_bytes = 0
        HttpToolsProtocol.on_headers_complete(self)
        if self.cycle is not None:
            self.cycle.__class__ = JsonErrorCycle  # uvicorn builds the cycle itself: its 500 becomes JSON

    def _head_problem(self) -> refusal.Refusal | None:
        limits, headers = self.limits, self.headers
        if len(self.url) > limits.max_url_bytes:
            return refusal.url_too_long(limits.max_url_bytes)
        if len(headers) > limits.max_headers:
            return refusal.too_many_headers(limits.max_headers)
        if not (self._head_ascii and self._read_ascii) and not b"".join(map(_VALUE, headers)).isascii():
            return refusal.header_not_ascii(next(name for name, value in headers if not value.isascii()))
        if self._head_upper + self._read_size > limits.max_header_bytes:  # the reads could hold a head this big
            size = len(self.url) + sum(len(name) + len(value) + 4 for name, value in headers)  # ": " and CRLF
            if size > limits.max_header_bytes:
                return refusal.headers_too_large(limits.max_header_bytes)
        return None

    def on_message_complete(self) -> None:
        if self._timer is not None:
            self._disarm()
        self._phase = APP
        HttpToolsProtocol.on_message_complete(self)

    # Deadlines

    def _arm(self, delay: float) -> None:
        self._timer = self.loop.call_later(delay, self._expired)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expired(self) -> None:
        self._timer = None
        if self.transport.is_closing() or self._phase in (APP, REFUSED):
            return
        if self.flow.read_paused:  # we stopped reading (a pipelined request waits): not the client's fault
            self._arm(self.limits.header_timeout_s)
            return
        if self._phase == IDLE:
            EDGE_REFUSALS.labels("0", "idle_connection").inc()  # closed without an answer
            self.transport.close()  # opened, never used
        elif self._phase == HEAD:
            self._refuse(refusal.header_timeout(self.limits.header_timeout_s))
        else:
            self._body_expired()

    def _body_expired(self) -> None:
        limits = self.limits
        allowed = limits.body_timeout_s + self._body_bytes / max(1, limits.body_min_rate)
        left = self._body_since + allowed - self.loop.time()
        if left > 0:
            self._arm(left)
            return
        self._refuse(refusal.body_timeout(limits.body_timeout_s, limits.body_min_rate))

    # Refusing

    def _refuse(self, answer: refusal.Refusal) -> None:
        """Answer when no response of this connection is under way, then let the client go."""
        phase, self._phase = self._phase, REFUSED
        self._disarm()
        cycle = self.cycle
        if _may_answer(phase, cycle):
            self.transport.write(refusal.response_bytes(self.url, answer, self.server_state.default_headers))
        if cycle is not None and not cycle.response_complete:
            cycle.disconnected = True  # the application reading this body gets http.disconnect
            cycle.message_event.set()
        EDGE_REFUSALS.labels(str(answer.status), answer.code).inc()
        log.debug("refused %d %s from %s", answer.status, answer.code, self.client and self.client[0])
        self._linger()

    def _linger(self) -> None:
        if not self.transport.can_write_eof():
            self.transport.close()
            return
        self.transport.write_eof()
        self.flow.resume_reading()  # drain the client until its EOF (eof_received closes) or the timer
        self._timer = self.loop.call_later(LINGER_S, self.transport.close)


class JsonErrorCycle(RequestResponseCycle):
    """uvicorn's request cycle whose last-resort 500 (the application raised, or returned without an
    answer) is JSON in the caller's shape rather than ``text/plain``."""

    async def send_500_response(self) -> None:
        answer = refusal.Refusal(500, "internal_error", "The server failed to handle this request.")
        body = refusal.body_for(self.scope.get("raw_path", b""), answer)
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                   (b"connection", b"close"), *refusal.request_id_headers()]  # fmt: skip
        await self.send({"type": "http.response.start", "status": 500, "headers": headers})
        await self.send({"type": "http.response.body", "body": body, "more_body": False})
        EDGE_REFUSALS.labels("500", answer.code).inc()


@functools.cache
def _connection_cap() -> int:
    """Read at the first connection: after the lifespan raised the fd limit (routing.process.capacity)."""
    return LIMITS.connection_cap()


def _may_answer(phase: int, cycle: RequestResponseCycle | None) -> bool:
    """A refusal is written only where it cannot be read as part of another answer."""
    if phase == BODY:
        return cycle is not None and not cycle.response_started  # this request's own answer not begun
    return cycle is None or cycle.response_complete  # a new request's head: the previous answer is done


def _parser_refusal(exc: httptools.HttpParserError) -> refusal.Refusal:
    cause = exc.__context__ if isinstance(exc, httptools.HttpParserCallbackError) else exc
    if isinstance(cause, httptools.HttpParserInvalidURLError | UnicodeError):
        return refusal.malformed(str(cause) or "not a valid URL", url=True)
    if isinstance(cause, httptools.HttpParserError):
        return refusal.malformed(str(cause) or "unreadable request")
    log.warning("parser callback failed", exc_info=cause)
    return refusal.malformed("unreadable request")
