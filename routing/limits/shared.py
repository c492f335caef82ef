"""Share learned limits and send counts across gateway processes: one Redis hash, one EVAL a second.

Each process sends, per offering, the requests and tokens it sent since the last sync and its
freshest rate-limit observation; the script keeps the newest observation (by its epoch stamp)
with the requests every process sent after it, and cumulative send counters. The reply is the
whole hash: a process adopts the newest observation and adds the other processes' sends to its
counts and forecast. Never on a request's path: other processes' sends are seen within ``SYNC_S``
(docs/routing.md says what that costs).
"""

from __future__ import annotations

import logging
from functools import partial

from contracts.redis_keys import PREFIX
from routing.limits.board import LimitBoard, OfferingLoad
from routing.process.periodic import Periodic
from routing.redis.pipe import PipelinedRedis, RedisUnavailable

log = logging.getLogger("routing.limits")

LIMITS_KEY = f"{PREFIX}limits"  # hash "<offering>:<field>"
SYNC_S = 1.0
KEY_TTL_S = 3600
GROUP = 12  # ARGV entries per offering

# Fields: n/nt cumulative requests/tokens sent; at observation stamp; lr/lt remaining then (-1: none);
# Lr/Lt limits (-1: none); rs refill instant; sr/st requests/tokens sent after the observation.
MERGE = """
for i = 1, #ARGV, 12 do
  local id = ARGV[i]
  local req, tok = tonumber(ARGV[i+1]), tonumber(ARGV[i+2])
  redis.call('HINCRBY', KEYS[1], id..':n', req)
  redis.call('HINCRBY', KEYS[1], id..':nt', tok)
  local at = tonumber(redis.call('HGET', KEYS[1], id..':at') or '0')
  if ARGV[i+3] == '1' and tonumber(ARGV[i+4]) > at then
    redis.call('HSET', KEYS[1], id..':at', ARGV[i+4], id..':lr', ARGV[i+5], id..':lt', ARGV[i+6],
      id..':Lr', ARGV[i+7], id..':Lt', ARGV[i+8], id..':rs', ARGV[i+9], id..':sr', ARGV[i+10], id..':st', ARGV[i+11])
  elseif at > 0 then
    redis.call('HINCRBY', KEYS[1], id..':sr', req)
    redis.call('HINCRBY', KEYS[1], id..':st', tok)
  end
end
redis.call('EXPIRE', KEYS[1], TTL)
return redis.call('HGETALL', KEYS[1])
""".replace("TTL", str(KEY_TTL_S))


def _opt(value: int | None) -> str:
    return "-1" if value is None else str(value)


def _args(load: OfferingLoad, offering_id: int) -> list[str]:
    return [
        str(offering_id), str(load.pending_requests), str(load.pending_tokens), "1" if load.pending_seen else "0",
        f"{load.seen_at:.6f}", _opt(load.left_requests), _opt(load.left_tokens), _opt(load.limit_requests),
        _opt(load.limit_tokens), f"{load.reset_at:.3f}", str(load.seq - load.seen_seq),
        str(load.tokens_sent - load.seen_tokens),
    ]  # fmt: skip


def parse(flat: list[bytes]) -> dict[int, dict[str, float]]:
    out: dict[int, dict[str, float]] = {}
    for i in range(0, len(flat) - 1, 2):
        oid, _, name = flat[i].decode().partition(":")
        out.setdefault(int(oid), {})[name] = float(flat[i + 1])
    return out


def _none(value: float | None) -> int | None:
    return None if value is None or value < 0 else int(value)


Drained = dict[int, tuple[int, int, int, int]]  # offering -> (requests, tokens pushed; our sends, tokens then)


def absorb(board: LimitBoard, shared: dict[int, dict[str, float]], drained: Drained) -> None:
    """Count the other processes' sends; adopt the newest observation with everything sent after it."""
    for offering_id, values in shared.items():
        load = board.get(offering_id)
        pushed, pushed_tokens, seq, tokens = drained.get(offering_id, (0, 0, load.seq, load.tokens_sent))
        total, total_tokens = int(values.get("n", 0)), int(values.get("nt", 0))
        others, others_tokens = total - load.shared_requests - pushed, total_tokens - load.shared_tokens - pushed_tokens
        if load.shared_seen and others > 0:  # the first sync only learns where the counters stand
            board.count(load, others, max(0, others_tokens))
            seq, tokens = seq + others, tokens + max(0, others_tokens)
        load.shared_requests, load.shared_tokens, load.shared_seen = total, total_tokens, True
        at = values.get("at", 0.0)
        if at and at >= load.seen_at - 1e-6:  # our own observation comes back rounded to 1 µs
            _adopt(load, values, seq, tokens)


def _adopt(load: OfferingLoad, values: dict[str, float], seq: int, tokens: int) -> None:
    """What was left at the newest observation minus every process's sends after it (``sr``/``st``);
    our sends since the push come on top of ``seq``/``tokens``."""
    left, left_tokens = _none(values.get("lr")), _none(values.get("lt"))
    load.left_requests = None if left is None else left - int(values.get("sr", 0))
    load.left_tokens = None if left_tokens is None else left_tokens - int(values.get("st", 0))
    load.limit_requests = _none(values.get("Lr")) or load.limit_requests
    load.limit_tokens = _none(values.get("Lt")) or load.limit_tokens
    load.seen_at, load.reset_at = values["at"], values.get("rs", 0.0)
    load.seen_seq, load.seen_tokens = seq, tokens
    load.version += 1


async def sync_once(redis: PipelinedRedis, board: LimitBoard) -> None:
    args: list[str] = []
    drained: Drained = {}
    generation = board.generation
    for offering_id, load in board.items():
        if load.pending_requests or load.pending_seen:
            args += _args(load, offering_id)
        drained[offering_id] = (load.pending_requests, load.pending_tokens, load.seq, load.tokens_sent)
        load.pending_requests = load.pending_tokens = 0
        load.pending_seen = False
    try:
        reply = await redis.execute("EVAL", MERGE, 1, LIMITS_KEY, *args)
    except (RedisUnavailable, OSError) as exc:
        for offering_id, (requests, tokens, _, _) in drained.items() if board.generation == generation else ():
            load = board.get(offering_id)  # sent at the next sync
            load.pending_requests += requests
            load.pending_tokens += tokens
        log.debug("limits not shared: %s", exc)
        return
    if board.generation == generation:
        absorb(board, parse(reply), drained)


class LimitSync(Periodic):
    def __init__(self, redis: PipelinedRedis, board: LimitBoard, period_s: float = SYNC_S) -> None:
        super().__init__(partial(sync_once, redis, board), period_s, log=log, what="limit sync")
