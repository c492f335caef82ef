"""Bounded load on the gateway: a fixed rate for a fixed time, every answer recorded, stops by itself."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import requests

WORKERS = 48  # enough threads that a 5 s stall at 25 req/s does not slow the sender down
REQUEST_TIMEOUT_S = 30.0
BODY: dict[str, Any] = {
    "model": "deepseek-v3.2",
    "messages": [{"role": "user", "content": "Say hello."}],
    "max_tokens": 8,
}


@dataclass(frozen=True, slots=True)
class Answer:
    sent_at: float  # monotonic
    status: int  # 0: no HTTP answer (connection refused or reset)
    retry_after: str | None = None
    request_id: str | None = None


@dataclass
class LoadResult:
    answers: list[Answer] = field(default_factory=list)

    @property
    def sent(self) -> int:
        return len(self.answers)

    def ok_ids(self) -> list[str]:
        return [a.request_id for a in list(self.answers) if a.status == 200 and a.request_id]

    def count(self, predicate: Callable[[Answer], bool]) -> int:
        return sum(1 for a in self.answers if predicate(a))

    @property
    def server_errors(self) -> list[Answer]:
        return [a for a in self.answers if a.status >= 500]

    @property
    def unavailable_with_retry_after(self) -> int:
        return self.count(lambda a: a.status == 503 and a.retry_after is not None)

    @property
    def no_answer(self) -> int:
        return self.count(lambda a: a.status == 0)

    def first_ok_after(self, moment: float) -> float | None:
        """Seconds from ``moment`` to the first request sent after it that got a 200."""
        times = [a.sent_at for a in self.answers if a.status == 200 and a.sent_at >= moment]
        return min(times) - moment if times else None


class Load:
    """``with Load(url, key, rate=25, seconds=20) as load: ...`` — sends in the background, joins on exit."""

    def __init__(
        self, base_url: str, key: str, *, rate: float, seconds: float, body: dict[str, Any] | None = None
    ) -> None:
        self._url = f"{base_url}/v1/chat/completions"
        self._body = BODY if body is None else body
        self._headers = {"authorization": f"Bearer {key}"}
        self._total = int(rate * seconds)
        self._interval = 1.0 / rate
        self._local = threading.local()
        self._lock = threading.Lock()
        self.result = LoadResult()
        self._thread = threading.Thread(target=self._send_all, daemon=True)
        self.started_at = 0.0

    def __enter__(self) -> Load:
        self.started_at = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._thread.join(timeout=self._total * self._interval + REQUEST_TIMEOUT_S + 30)

    def _send_all(self) -> None:
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            for index in range(self._total):
                delay = self.started_at + index * self._interval - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                pool.submit(self._one)

    def _one(self) -> None:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
        sent = time.monotonic()
        try:
            response = session.post(self._url, json=self._body, headers=self._headers, timeout=REQUEST_TIMEOUT_S)
            answer = Answer(
                sent, response.status_code, response.headers.get("retry-after"), response.headers.get("x-request-id")
            )
        except requests.RequestException:
            answer = Answer(sent, 0)
        with self._lock:
            self.result.answers.append(answer)
