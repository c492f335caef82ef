"""Share live signals across gateway processes: one Redis hash of faded EWMAs per deployment.

Every ``SYNC_S`` a background task sends this process's pending observations and reads the merged
copy back in one EVAL (one round trip per second, never on a request's path); the scorer reads the
local copy. EWMAs are stamped with the health board's clock (epoch seconds in production) so every
process fades them the same way.
"""

from __future__ import annotations

import logging
from functools import partial

from contracts.redis_keys import PREFIX, REPROBE_REQUESTS
from routing.failover.health import HealthBoard
from routing.failover.live import ERROR_HALF_LIFE_S
from routing.process.periodic import Periodic
from routing.redis.pipe import PipelinedRedis, RedisUnavailable

log = logging.getLogger("routing.live")

# hash "<offering>:e|r|l|t|k" -> error EWMA, 429 EWMA, latency EWMA, stamp, time a half-open trial succeeded
LIVE_KEY = f"{PREFIX}live"
SYNC_S = 1.0  # other processes see a fault within about a second
KEY_TTL_S = 3600  # a deployment without traffic for an hour starts clean
EWMA_ALPHA = 0.2

MERGE = """
local now, hl, a = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
for i = 4, #ARGV, 6 do
  local id = ARGV[i]
  local ok, fail, thr, lat = tonumber(ARGV[i+1]), tonumber(ARGV[i+2]), tonumber(ARGV[i+3]), tonumber(ARGV[i+4])
  local rec = tonumber(ARGV[i+5])
  -- a recovery this process saw last wins; a failure anywhere else ends the others' trust
  if rec > 0 then redis.call('HSET', KEYS[1], id..':k', tostring(rec))
  elseif fail > 0 then redis.call('HSET', KEYS[1], id..':k', '0') end
  local v = redis.call('HMGET', KEYS[1], id..':e', id..':r', id..':l', id..':t')
  local t = tonumber(v[4]) or now
  local fade = 0.5 ^ (math.max(0, now - t) / hl)
  local e, r, l = (tonumber(v[1]) or 0) * fade, (tonumber(v[2]) or 0) * fade, tonumber(v[3])
  local n = ok + fail
  if n > 0 then
    local keep = (1 - a) ^ n
    e = e * keep + (fail / n) * (1 - keep)
    r = r * keep + (thr / n) * (1 - keep)
  end
  if lat >= 0 then
    -- after a successful trial the fault's latencies are over: the EWMA starts again from what came since
    if l and rec <= 0 then local keep = (1 - a) ^ ok; l = l * keep + lat * (1 - keep) else l = lat end
    redis.call('HSET', KEYS[1], id..':l', tostring(l))
  end
  redis.call('HSET', KEYS[1], id..':e', tostring(e), id..':r', tostring(r), id..':t', tostring(now))
end
redis.call('EXPIRE', KEYS[1], TTL)
return redis.call('HGETALL', KEYS[1])
""".replace("TTL", str(KEY_TTL_S))


def parse_shared(flat: list[bytes]) -> dict[int, dict[str, float]]:
    """HGETALL reply -> offering id -> {"e", "r", "l", "t"}."""
    out: dict[int, dict[str, float]] = {}
    for i in range(0, len(flat) - 1, 2):
        field = flat[i].decode() if isinstance(flat[i], bytes) else str(flat[i])
        oid, _, name = field.partition(":")
        out.setdefault(int(oid), {})[name] = float(flat[i + 1])
    return out


async def _ask_reprobes(redis: PipelinedRedis, health: HealthBoard) -> None:
    """Breakers opened since the last sync: evaluation probes those offerings again now."""
    opened = health.drain_opened()
    if not opened:
        return
    try:
        await redis.execute("SADD", REPROBE_REQUESTS, *(str(oid) for oid in sorted(opened)))
    except (RedisUnavailable, OSError) as exc:
        log.debug("re-probe requests not sent: %s", exc)  # the schedule probes them anyway


async def sync_once(redis: PipelinedRedis, health: HealthBoard) -> None:
    await _ask_reprobes(redis, health)
    pending = health.drain_pending()
    args: list[str] = [f"{health.now():.3f}", str(ERROR_HALF_LIFE_S), str(EWMA_ALPHA)]
    for offering_id, observed in pending.items():
        args += observed.args(offering_id)
    try:
        reply = await redis.execute("EVAL", MERGE, 1, LIVE_KEY, *args)
    except (RedisUnavailable, OSError) as exc:
        health.restore_pending(pending)  # merged at the next sync
        log.debug("live signals not shared: %s", exc)
        return
    health.absorb(parse_shared(reply))


class LiveSync(Periodic):
    def __init__(self, redis: PipelinedRedis, health: HealthBoard, period_s: float = SYNC_S) -> None:
        super().__init__(partial(sync_once, redis, health), period_s, log=log, what="live signal sync")
