"""Hand spooled usage events to Redis once it answers again; remove a segment only when confirmed."""

from __future__ import annotations

import asyncio
import logging

import hiredis

from contracts import redis_keys as rk
from routing.redis_pipe import PipelinedRedis, RedisUnavailable
from routing.usage.spool import UsageSpool

log = logging.getLogger("routing.spool")

REPLAY_EVERY_S = 1.0  # how soon after Redis returns the spool drains; an empty folder costs one listdir


async def replay_once(redis: PipelinedRedis, spool: UsageSpool) -> int:
    """Replay every claimable segment; stops at the first Redis failure (the segment stays). Returns events."""
    spool.rotate()
    replayed = 0
    for path in spool.segments():
        claimed = spool.claim(path)
        if claimed is None:
            continue
        try:
            await redis.execute("PING")  # reconnects, or raises while Redis is still away
            pending = [redis.submit("XADD", rk.USAGE_STREAM, "*", "e", line) for line in claimed.lines]
            for future in pending:
                await future
        except (RedisUnavailable, hiredis.ReplyError):
            claimed.release()
            raise
        claimed.done()
        replayed += len(claimed.lines)
    return replayed


async def replay_loop(redis: PipelinedRedis, spool: UsageSpool, every_s: float = REPLAY_EVERY_S) -> None:
    while True:
        await asyncio.sleep(every_s)
        spool.replay_rounds += 1
        try:
            replayed = await replay_once(redis, spool)
        except RedisUnavailable:
            continue
        except (OSError, hiredis.ReplyError) as exc:
            log.error("usage spool replay failed: %s", exc)
            continue
        if replayed:
            log.warning("replayed %d spooled usage events", replayed)
