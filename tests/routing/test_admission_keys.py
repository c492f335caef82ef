"""Admission's and settlement's Redis keys, built once per key and minute and shared by that minute's
calls: the same names as built for each call, the month right at its edge, a late settlement right."""

from __future__ import annotations

import calendar
import time

from contracts import redis_keys as rk
from routing.limits import admission
from routing.limits.admission import Admission, settle_call


def _admission(minute: int, month: str, *, tenant_id: int = 7, key_id: int = 70) -> Admission:
    return Admission(tenant_id, key_id, minute, month, 10, "h", "h", 100)


def test_shared_keys_are_the_keys_of_each_call():
    lists = admission._KeyLists()
    minute = int(time.time() // 60)
    first = lists.of(7, 70, minute)
    assert lists.of(7, 70, minute) is first  # the second call of the minute formats nothing
    month = time.strftime("%Y%m", time.gmtime(minute * 60))
    assert first[2] == month
    assert first[0] == admission._admission_keys(7, 70, minute, month)
    assert first[1] == admission._settle_keys(7, 70, minute, month)
    assert rk.rate_window(7, "key:70", minute) in first[0] and rk.rate_window(7, "key:70", minute - 1) in first[0]
    assert lists.of(7, 71, minute)[0] != first[0]  # another key of the tenant: its own names


def test_the_month_turns_with_the_minute_that_begins_it():
    first_minute_of_march = calendar.timegm((2026, 3, 1, 0, 0, 0)) // 60
    lists = admission._KeyLists()
    assert lists.of(1, 1, first_minute_of_march - 1)[2] == "202602"
    assert lists.of(1, 1, first_minute_of_march)[2] == "202603"


def test_a_settlement_after_the_minute_turned_uses_its_admissions_keys():
    minute = int(time.time() // 60)
    month = time.strftime("%Y%m", time.gmtime((minute - 3) * 60))
    adm = _admission(minute - 3, month)  # a long call: admitted three minutes ago
    admission._KEYS.of(7, 70, minute)  # calls of this minute since
    keys, _ = settle_call(adm, charge_micros=1, tokens_used=10)
    assert keys == admission._settle_keys(7, 70, minute - 3, month)
    assert rk.rate_window(7, "key:70", minute - 3) in keys
