"""Lua scripts loaded from files beside this module, run by EVALSHA with an EVAL fallback."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any

import hiredis

from routing.redis.pipe import Arg, PipelinedRedis, RedisUnavailable

_HERE = Path(__file__).resolve().parent


def _is_noscript(exc: hiredis.ReplyError) -> bool:
    return str(exc).startswith("NOSCRIPT")


class Script:
    def __init__(self, filename: str) -> None:
        self.source = (_HERE / filename).read_text()
        self.sha = hashlib.sha1(self.source.encode()).hexdigest()  # noqa: S324 - Redis names scripts by SHA1

    async def run(self, redis: PipelinedRedis, keys: list[str], args: list[Arg]) -> Any:
        return await self.result(redis, self.submit(redis, keys, args), keys, args)

    def submit(self, redis: PipelinedRedis, keys: list[str], args: list[Arg]) -> asyncio.Future[Any]:
        """Queue the EVALSHA in this tick's pipeline; pass the future to ``result``."""
        return redis.submit("EVALSHA", self.sha, len(keys), *keys, *args)

    async def result(self, redis: PipelinedRedis, future: asyncio.Future[Any], keys: list[str], args: list[Arg]) -> Any:
        try:
            return await future
        except hiredis.ReplyError as exc:
            if not _is_noscript(exc):
                raise
            return await self._eval(redis, keys, args)
        except RedisUnavailable:
            # The connection dropped with the EVALSHA in flight: once more on a new connection. The
            # race: Redis restarted in between (scripts are not persisted), so the retried EVALSHA
            # meets an empty script cache and answers NOSCRIPT: load it with EVAL, like a first call.
            return await self._again(redis, keys, args)

    async def _again(self, redis: PipelinedRedis, keys: list[str], args: list[Arg]) -> Any:
        try:
            return await redis.execute("EVALSHA", self.sha, len(keys), *keys, *args)
        except hiredis.ReplyError as exc:
            if not _is_noscript(exc):
                raise
            return await self._eval(redis, keys, args)

    async def _eval(self, redis: PipelinedRedis, keys: list[str], args: list[Arg]) -> Any:
        """EVAL runs the source and caches it under its SHA1: the next EVALSHA finds it again."""
        return await redis.execute("EVAL", self.source, len(keys), *keys, *args)


ADMISSION = Script("admission.lua")
SETTLE = Script("settle.lua")
HEDGE = Script("hedge.lua")
