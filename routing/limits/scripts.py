"""Lua scripts loaded from files beside this module, run by EVALSHA with an EVAL fallback."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any

import hiredis

from routing.redis_pipe import Arg, PipelinedRedis, RedisUnavailable

_HERE = Path(__file__).resolve().parent


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
            if not str(exc).startswith("NOSCRIPT"):
                raise
            return await redis.execute("EVAL", self.source, len(keys), *keys, *args)
        except RedisUnavailable:
            return await redis.execute("EVALSHA", self.sha, len(keys), *keys, *args)


ADMISSION = Script("admission.lua")
SETTLE = Script("settle.lua")
HEDGE = Script("hedge.lua")
