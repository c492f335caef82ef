"""Admission and settlement of one request against the tenant's and key's limits and balance."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from contracts import redis_keys as rk
from contracts.keyrecord import KeyRecord
from routing.http.errors import GatewayError
from routing.limits.scripts import ADMISSION, SETTLE
from routing.redis.pipe import Arg, PipelinedRedis

MONTH_SPEND_TTL_S = rk.MONTH_SPEND_TTL_S  # a month's spend outlives the month by a few days for reconciliation

_REFUSALS = {
    1: (429, "key_rate_limited", "API key request rate limit (RPM) exceeded."),
    2: (429, "tenant_rate_limited", "Organisation request rate limit (RPM) exceeded."),
    3: (429, "key_token_rate_limited", "API key token rate limit (TPM) exceeded."),
    4: (429, "tenant_token_rate_limited", "Organisation token rate limit (TPM) exceeded."),
    5: (429, "key_concurrency_limited", "Too many concurrent requests for this API key."),
    6: (429, "tenant_concurrency_limited", "Too many concurrent requests for this organisation."),
    7: (402, "key_budget_exceeded", "This API key's monthly budget is exhausted."),
    8: (402, "insufficient_balance", "Insufficient balance for the worst-case cost of this request."),
    9: (402, "tenant_spend_limit_exceeded", "This organisation's monthly spend limit is reached."),
}
# While Redis is being repopulated after losing its data, a missing balance reads as 0: not the
# tenant's fault, so the refusal is a retryable 503 instead of "insufficient balance".
_REBUILDING = (503, "service_unavailable", "The balance is being restored after a restart; retry shortly.")


@dataclass(slots=True)
class Admission:
    """What admission took, so settlement can give back exactly that."""

    tenant_id: int
    key_id: int
    minute: int
    month: str
    tokens_reserved: int
    lease_id: str
    hold_id: str
    hold_micros: int
    settled: bool = False

    @property
    def hold_member(self) -> str:
        return f"{self.tenant_id}:{self.hold_id}"


def _limit(value: int | None) -> int:
    return value if value and value > 0 else 0


def _monthly(value: int | None) -> int:
    """A monthly amount for the script: -1 = no limit (0 is a limit: nothing may be spent)."""
    return value if value is not None else -1


async def admit(
    redis: PipelinedRedis, record: KeyRecord, *, tokens: int, hold_micros: int, lifetime_s: float,
    rebuilding: bool = False, now: float | None = None,
) -> Admission:  # fmt: skip
    now = time.time() if now is None else now
    minute = int(now // 60)
    hold_id = os.urandom(9).hex()
    adm = Admission(
        record.tenant_id,
        record.key_id,
        minute,
        time.strftime("%Y%m", time.gmtime(now)),
        tokens,
        hold_id,
        hold_id,
        hold_micros,
    )
    keys = _keys(adm)
    args: list[Arg] = [
        repr(now), _limit(record.key_limits.rpm), _limit(record.tenant_limits.rpm),
        _limit(record.key_limits.tpm), _limit(record.tenant_limits.tpm),
        _limit(record.key_limits.max_concurrency), _limit(record.tenant_limits.max_concurrency),
        tokens, adm.lease_id, repr(now + lifetime_s), _monthly(record.monthly_budget_micros), hold_micros, hold_id,
        adm.hold_member, repr(now + lifetime_s), 60 - int(now % 60),
        _monthly(record.tenant_monthly_spend_limit_micros), rk.held_key_field(adm.key_id), adm.key_id,
    ]  # fmt: skip
    code, retry_after = await ADMISSION.run(redis, keys, args)
    if code:
        status, error_code, message = _REBUILDING if rebuilding and int(code) == 8 else _REFUSALS[int(code)]
        retry = float(retry_after) if status == 429 else 1.0 if status == 503 else None
        raise GatewayError(status, error_code, message, retry_after=retry)
    return adm


def _keys(adm: Admission) -> list[str]:
    tid, key_scope = adm.tenant_id, f"key:{adm.key_id}"
    return [
        rk.rate_window(tid, key_scope, adm.minute),
        rk.rate_window(tid, "tenant", adm.minute),
        rk.concurrency(tid, key_scope),
        rk.concurrency(tid, "tenant"),
        rk.key_month_spend(tid, adm.key_id, adm.month),
        rk.tenant_available(tid),
        rk.tenant_holds(tid),
        rk.tenant_hold_expiries(tid),
        rk.rate_window(tid, key_scope, adm.minute - 1),
        rk.rate_window(tid, "tenant", adm.minute - 1),
        rk.tenant_month_spend(tid, adm.month),
        rk.tenant_held(tid),
        rk.tenant_hold_keys(tid),
    ]


def settle_call(adm: Admission, *, charge_micros: int, tokens_used: int) -> tuple[list[str], list[Arg]]:
    """Keys and args of the settlement script for this admission (see settle.lua)."""
    tid, key_scope = adm.tenant_id, f"key:{adm.key_id}"
    keys = [
        rk.tenant_available(tid), rk.tenant_holds(tid), rk.tenant_hold_expiries(tid),
        rk.key_month_spend(tid, adm.key_id, adm.month),
        rk.concurrency(tid, key_scope), rk.concurrency(tid, "tenant"),
        rk.rate_window(tid, key_scope, adm.minute), rk.rate_window(tid, "tenant", adm.minute),
        rk.tenant_month_spend(tid, adm.month), rk.tenant_held(tid), rk.tenant_hold_keys(tid),
    ]  # fmt: skip
    args: list[Arg] = [
        adm.hold_id, adm.hold_micros, charge_micros, adm.hold_member, adm.lease_id,
        tokens_used - adm.tokens_reserved, MONTH_SPEND_TTL_S, rk.held_key_field(adm.key_id),
    ]  # fmt: skip
    return keys, args


async def settle(redis: PipelinedRedis, adm: Admission, *, charge_micros: int, tokens_used: int) -> bool:
    """Give back the hold minus the charge, release the lease, correct the TPM window. Once."""
    if adm.settled:
        return False
    adm.settled = True
    keys, args = settle_call(adm, charge_micros=charge_micros, tokens_used=tokens_used)
    return bool(await SETTLE.run(redis, keys, args))
