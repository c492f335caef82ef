"""A step run every few seconds on the gateway's event loop until stopped (the live-signal and
learned-limit sharing): a failing step is logged and the loop goes on."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable


class Periodic:
    def __init__(self, step: Callable[[], Awaitable[None]], period_s: float, *, log: logging.Logger, what: str) -> None:
        self._step = step
        self._period_s = period_s
        self._log = log
        self._what = what
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._period_s > 0:
            self._task = asyncio.create_task(self._loop())

    async def _loop(self) -> None:
        log = self._log
        while True:
            await asyncio.sleep(self._period_s)
            try:
                await self._step()
            except Exception:  # a bad reply must not end sharing for the process's lifetime
                log.exception("%s failed", self._what)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
