"""Noticing a client that leaves while its call waits on the upstream."""

from __future__ import annotations

import asyncio
from typing import Any

from routing.handoff.call import Call
from routing.http.asgi_io import Receive


class DisconnectWatch:
    """A disconnect cancels the call's task at once, which closes the upstream connection. The wait is
    the server's ``receive()`` alone with a callback on it, not a coroutine of ours around it: one frame
    less for every open stream."""

    __slots__ = ("_call", "_receive", "_task", "_waiting")

    def __init__(self, receive: Receive, call: Call, task: asyncio.Task[None]) -> None:
        self._receive, self._call, self._task = receive, call, task
        self._waiting = self._arm()

    def _arm(self) -> asyncio.Future[dict[str, Any]]:
        waiting = asyncio.ensure_future(self._receive())
        waiting.add_done_callback(self._received)
        return waiting

    def _received(self, waiting: asyncio.Future[dict[str, Any]]) -> None:
        if waiting.cancelled():
            return
        if waiting.result()["type"] == "http.disconnect":
            self._call.client_gone = True
            self._task.cancel()
        else:  # the rest of a body nobody reads: wait on
            self._waiting = self._arm()

    def cancel(self) -> None:
        self._waiting.cancel()
