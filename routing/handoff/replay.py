"""Hand spooled usage events to Redis once it answers again; remove a segment only when confirmed."""

from __future__ import annotations

import asyncio
import logging

import hiredis
import orjson

from routing.handoff.emit import USAGE_SHARDS, usage_stream_of
from routing.handoff.spool import UsageSpool
from routing.redis.pipe import PipelinedRedis, RedisUnavailable

log = logging.getLogger("routing.spool")

REPLAY_EVERY_S = 1.0  # how soon after Redis returns the spool drains; an empty folder costs one listdir


def _stream(line: bytes, shards: int) -> str:
    """The stream the event would have gone to (its tenant's shard), from the spooled JSON; a line
    that is not an event goes to shard 0, where metering sets it aside as it does any bad entry."""
    try:
        tenant_id = int(orjson.loads(line)["tenant_id"])
    except (ValueError, TypeError, KeyError):
        tenant_id = 0
    return usage_stream_of(tenant_id, shards)


async def replay_once(redis: PipelinedRedis, spool: UsageSpool, shards: int = USAGE_SHARDS) -> int:
    """Replay what memory holds, then every claimable segment; stops at the first Redis failure (what was
    not confirmed stays). Returns events replayed. Redis answering clears ``spool.redis_failing``."""
    replayed = await _replay_held(redis, spool, shards)
    spool.rotate()
    for path in spool.segments():
        claimed = spool.claim(path)
        if claimed is None:
            continue
        try:
            await redis.execute("PING")  # reconnects, or raises while Redis is still away
            pending = [redis.submit("XADD", _stream(line, shards), "*", "e", line) for line in claimed.lines]
            for future in pending:
                await future
        except (RedisUnavailable, hiredis.ReplyError):
            claimed.release()
            raise
        claimed.done()
        replayed += len(claimed.lines)
    return replayed


async def _replay_held(redis: PipelinedRedis, spool: UsageSpool, shards: int) -> int:
    """Events neither Redis nor the disk took (routing.handoff.spool): removed from memory once confirmed."""
    if not spool.redis_failing and not spool.held:
        return 0
    held = list(spool.held)
    await redis.execute("PING")  # reconnects, or raises while Redis is still away
    pending = [redis.submit("XADD", _stream(line, shards), "*", "e", line) for line in held]
    for future in pending:
        await future  # a refused XADD (hiredis.ReplyError) leaves it all held, and Redis still failing
    del spool.held[: len(held)]  # only what was sent; calls that ended meanwhile appended after it
    spool.redis_failing = False
    if held:
        log.warning("replayed %d usage events held in memory", len(held))
    return len(held)


async def replay_loop(
    redis: PipelinedRedis, spool: UsageSpool, every_s: float = REPLAY_EVERY_S, shards: int = USAGE_SHARDS
) -> None:
    while True:
        await asyncio.sleep(every_s)
        spool.replay_rounds += 1
        await spool.probe_off_loop()  # the disk, once a round, in a thread: the request path reads only the flag
        try:
            replayed = await replay_once(redis, spool, shards)
        except RedisUnavailable:
            continue
        except (OSError, hiredis.ReplyError) as exc:
            log.error("usage spool replay failed: %s", exc)
            continue
        if replayed:
            log.warning("replayed %d spooled usage events", replayed)
