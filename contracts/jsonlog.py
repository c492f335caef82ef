"""Structured logs: one JSON object per line with the request id, for the gateway and the platform.

``TOKENWAY_LOG_FORMAT=json`` switches both to it (text stays the default for people at a terminal).
The gateway sets ``REQUEST_ID`` when a call arrives; each ASGI request runs in its own task, so
the value never leaks from one call into another. With traces on (contracts.tracing), each line
written inside a span also carries its ``trace_id`` and ``span_id``.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from contextvars import ContextVar

import orjson

REQUEST_ID: ContextVar[str | None] = ContextVar("tokenway_request_id", default=None)
STANDARD_ATTRS = frozenset(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {
    "message",
    "asctime",
    "request_id",
}
# Where the current (trace id, span id) comes from: empty while traces are off, so a line costs nothing more.
TRACE_SOURCES: list[Callable[[], tuple[str, str] | None]] = []


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "ts": dt.datetime.fromtimestamp(record.created, tz=dt.UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = REQUEST_ID.get()
        if request_id:
            entry["request_id"] = request_id
        for source in TRACE_SOURCES:
            ids = source()
            if ids is not None:
                entry["trace_id"], entry["span_id"] = ids
        for name, value in record.__dict__.items():  # ``extra=`` fields, as they are
            if name not in STANDARD_ATTRS and not name.startswith("_"):
                entry[name] = value
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


class RequestIdFilter(logging.Filter):
    """Text logs get ``%(request_id)s`` too."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get() or "-"
        return True


def formatter_for(fmt: str) -> logging.Formatter:
    if fmt == "json":
        return JsonFormatter()
    return logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")


def configure(fmt: str, level: str = "INFO") -> None:
    """Root logging of a process that has no Django settings (the standalone gateway)."""
    handler = logging.StreamHandler()
    handler.setFormatter(formatter_for(fmt))
    handler.addFilter(RequestIdFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
