"""The last requests each provider received, as received (GET /_sim/requests)."""

from __future__ import annotations

from collections import deque
from typing import Any

MAX_PER_PROVIDER = 500


class RequestLog:
    def __init__(self, size: int = MAX_PER_PROVIDER) -> None:
        self.size = size
        self._logs: dict[str, deque[dict[str, Any]]] = {}

    def clear(self) -> None:
        self._logs.clear()

    def append(self, provider: str, entry: dict[str, Any]) -> None:
        log = self._logs.get(provider)
        if log is None:
            log = self._logs[provider] = deque(maxlen=self.size)
        log.append(entry)

    def last(self, provider: str | None, limit: int) -> list[dict[str, Any]]:
        if provider is not None:
            return list(self._logs.get(provider, ()))[-limit:][::-1]
        merged = sorted((entry for log in self._logs.values() for entry in log), key=lambda item: item["timestamp"])
        return merged[-limit:][::-1]
