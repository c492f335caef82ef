"""The usage event of a call, handed to metering on the Redis stream, plus the short-lived copy
that ``GET /api/v1/generation`` answers from before ingestion."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from contracts import redis_keys as rk
from contracts.keyrecord import KeyRecord
from contracts.usage import EndState, Tokens, UsageEvent
from routing.handoff.call import Bill, Call
from routing.redis.pipe import PipelinedRedis
from routing.telemetry.tracing import traceparent

# How many usage streams (TOKENWAY_USAGE_SHARDS), read once at start, here only: the live hand-off
# and the spool's replay (routing.handoff.replay) must pick the same shard for a tenant.
USAGE_SHARDS = rk.usage_shard_count_from_env()


def usage_stream_of(tenant_id: int, shards: int = USAGE_SHARDS) -> str:
    """The stream a tenant's events go to: always the same one, so metering applies them in order."""
    return rk.usage_stream(rk.usage_shard(tenant_id, shards))


def build_event(call: Call, bill: Bill, region: str, end_state: EndState = "") -> UsageEvent:
    """The call's usage event, storable as it is (the model a caller named may hold a NUL)."""
    return _build_event(call, bill, region, end_state).storable()


def _build_event(call: Call, bill: Bill, region: str, end_state: EndState) -> UsageEvent:
    offering = call.offering
    adm = call.admission
    return UsageEvent(
        request_id=call.request_id,
        tenant_id=call.record.tenant_id,
        key_id=call.record.key_id,
        model=call.view.model,
        offering_id=offering.offering_id if offering else None,
        provider=offering.provider if offering else None,
        region=region,
        route_mode=call.mode,
        route_reason=call.route_reason,
        tokens=bill.tokens,
        usage_source=bill.source,
        prices=offering.prices if offering else None,
        cost_micros=bill.cost_micros,
        charge_micros=bill.charge_micros,
        status=call.status,
        http_status=call.http_status,
        stream=call.view.stream,
        byok=call.byok,
        dialect_in=call.dialect.name,
        started_at=call.started_at,
        ttft_ms=call.ttft_ms,
        total_ms=(time.monotonic() - call.started_mono) * 1000,
        attempts=max(call.attempts, 1),
        hold_id=adm.hold_id if adm else None,
        hold_micros=adm.hold_micros if adm else 0,
        cache_fingerprint=call.fingerprint,
        flags=bill.flags,
        finished_at=time.time(),
        error_code=call.error_code,
        route_candidates=call.route_candidates,
        provider_cost_micros=bill.reported_cost_micros,
        end_state=end_state,
        finish_reason=call.facts.finish_reason,
        upstream_id=call.facts.upstream_id,
        traceparent=traceparent(),
        output_clamped_tokens=bill.clamped_output,
    )


def rejected_event(
    *, request_id: str, record: KeyRecord, dialect: str, model: str, status: int, code: str, region: str, started: float
) -> UsageEvent:
    """A call refused before a ``Call`` existed (its body could not be read): zero tokens, no hold."""
    now = time.time()
    return UsageEvent(
        request_id=request_id, tenant_id=record.tenant_id, key_id=record.key_id, model=model, offering_id=None,
        provider=None, region=region, route_mode="", route_reason="", tokens=Tokens(), usage_source="provider",
        prices=None, cost_micros=0, charge_micros=0, status="rejected", http_status=status, stream=False,
        dialect_in=dialect, started_at=started, total_ms=(now - started) * 1000, finished_at=now, error_code=code,
        end_state="rejected", traceparent=traceparent(),
    ).storable()  # fmt: skip


def submit_event(
    redis: PipelinedRedis, event: UsageEvent, ttl_s: int, shards: int = USAGE_SHARDS
) -> list[asyncio.Future[Any]]:
    """XADD (durable hand-off; metering applies it once per request id) and the generation copy."""
    payload = event.to_json()
    return [
        redis.submit("XADD", usage_stream_of(event.tenant_id, shards), "*", "e", payload),
        redis.submit("SET", rk.generation(event.request_id), payload, "EX", ttl_s),
    ]


async def emit_again(redis: PipelinedRedis, event: UsageEvent, ttl_s: int, shards: int = USAGE_SHARDS) -> None:
    """Slow path after a failed pipelined hand-off: reconnecting, one command at a time."""
    payload = event.to_json()
    await redis.execute("XADD", usage_stream_of(event.tenant_id, shards), "*", "e", payload)
    await redis.execute("SET", rk.generation(event.request_id), payload, "EX", ttl_s)
