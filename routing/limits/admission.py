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
    keys, _, month = _KEYS.of(record.tenant_id, record.key_id, minute)
    adm = Admission(record.tenant_id, record.key_id, minute, month, tokens, hold_id, hold_id, hold_micros)
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


class _KeyLists:
    """The Redis keys of admission and settlement for one key in one minute, built once and shared by every
    call of that key in that minute (an agent's calls come in runs): 24 key names are formatted per key
    and minute, not per call. Cleared when the minute turns, and when it holds ``MAX`` keys."""

    MAX = 10_000

    def __init__(self) -> None:
        self._minute = -1
        self._month = ""
        self._lists: dict[tuple[int, int, int], tuple[list[str], list[str], str]] = {}

    def of(self, tenant_id: int, key_id: int, minute: int) -> tuple[list[str], list[str], str]:
        """(admission keys, settlement keys, the month ``YYYYMM``) of this key in this minute."""
        lists = self._lists.get((tenant_id, key_id, minute))
        if lists is not None:
            return lists
        if minute != self._minute or len(self._lists) >= self.MAX:
            self._lists.clear()
        if minute != self._minute:
            self._minute, self._month = minute, _month_of(minute)
        month = self._month if minute == self._minute else _month_of(minute)
        lists = (
            _admission_keys(tenant_id, key_id, minute, month),
            _settle_keys(tenant_id, key_id, minute, month),
            month,
        )
        self._lists[(tenant_id, key_id, minute)] = lists
        return lists

    def settlement(self, tenant_id: int, key_id: int, minute: int, month: str) -> list[str]:
        """The settlement keys: shared while the admission's minute is the current one, else built."""
        lists = self._lists.get((tenant_id, key_id, minute))
        return lists[1] if lists is not None and lists[2] == month else _settle_keys(tenant_id, key_id, minute, month)


def _keys(adm: Admission) -> list[str]:
    """The admission script's keys for this admission."""
    return _admission_keys(adm.tenant_id, adm.key_id, adm.minute, adm.month)


def _month_of(minute: int) -> str:
    return time.strftime("%Y%m", time.gmtime(minute * 60))


def _admission_keys(tid: int, key_id: int, minute: int, month: str) -> list[str]:
    key_scope = f"key:{key_id}"
    return [
        rk.rate_window(tid, key_scope, minute),
        rk.rate_window(tid, "tenant", minute),
        rk.concurrency(tid, key_scope),
        rk.concurrency(tid, "tenant"),
        rk.key_month_spend(tid, key_id, month),
        rk.tenant_available(tid),
        rk.tenant_holds(tid),
        rk.tenant_hold_expiries(tid),
        rk.rate_window(tid, key_scope, minute - 1),
        rk.rate_window(tid, "tenant", minute - 1),
        rk.tenant_month_spend(tid, month),
        rk.tenant_held(tid),
        rk.tenant_hold_keys(tid),
    ]


def _settle_keys(tid: int, key_id: int, minute: int, month: str) -> list[str]:
    key_scope = f"key:{key_id}"
    return [
        rk.tenant_available(tid), rk.tenant_holds(tid), rk.tenant_hold_expiries(tid),
        rk.key_month_spend(tid, key_id, month),
        rk.concurrency(tid, key_scope), rk.concurrency(tid, "tenant"),
        rk.rate_window(tid, key_scope, minute), rk.rate_window(tid, "tenant", minute),
        rk.tenant_month_spend(tid, month), rk.tenant_held(tid), rk.tenant_hold_keys(tid),
    ]  # fmt: skip


_KEYS = _KeyLists()


def settle_call(adm: Admission, *, charge_micros: int, tokens_used: int) -> tuple[list[str], list[Arg]]:
    """Keys and args of the settlement script for this admission (see settle.lua)."""
    keys = _KEYS.settlement(adm.tenant_id, adm.key_id, adm.minute, adm.month)
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
