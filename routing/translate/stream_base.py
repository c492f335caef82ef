"""The streaming converter interface: upstream SSE events in, caller bytes out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from routing.http.errors import GatewayError
from routing.http.sse import SseEvent
from routing.usage.tracker import UsageTracker

# Builds the caller-dialect usage object (tokens + cost) from what the tracker holds now.
UsagePayload = Callable[[], dict[str, Any]]


class StreamConverter(Protocol):
    tracker: UsageTracker
    done: bool  # the upstream sent its terminal event
    upstream_error: bool  # the upstream sent an in-band error event

    def feed(self, event: SseEvent) -> bytes: ...

    def finish(self) -> bytes:
        """Bytes that close the caller's stream after a clean upstream end."""
        ...


@runtime_checkable
class FailsInBand(Protocol):
    """A converter whose stream has state an in-band failure must follow (Responses sequence numbers)."""

    def fail(self, error: GatewayError) -> bytes: ...
