"""Slot routing without a server: hash tags, the key each gateway command is routed by, and every
script call the gateway builds touching one slot (the cluster would refuse it with CROSSSLOT)."""

from __future__ import annotations

import time

import pytest

from contracts import redis_keys as rk
from contracts.keyrecord import KeyRecord, Limits
from routing.limits.admission import Admission, _keys, settle_call
from routing.redis.slots import command_key, command_slots, key_slot


def test_known_slots_of_plain_keys():
    # CRC16-XMODEM's check value (of "123456789"), and what CLUSTER KEYSLOT answers for foo and bar.
    assert key_slot("123456789") == 0x31C3 % 16384
    assert key_slot("foo") == 12182
    assert key_slot(b"bar") == 5061


def test_a_hash_tag_decides_the_slot_and_an_empty_tag_does_not():
    assert key_slot("tw:{t7}:avail") == key_slot("t7") == key_slot("x{t7}y{t8}")
    assert key_slot("a{}b") != key_slot("")  # "{}" is no tag: the whole key is hashed
    assert key_slot("a{b") == key_slot(b"a{b")


@pytest.mark.parametrize(
    ("args", "key"),
    [
        (("GET", "k"), "k"),
        (("XADD", "tw:usage:2", "*", "e", "{}"), "tw:usage:2"),
        (("EVALSHA", "abc", 2, "k1", "k2", "arg"), "k1"),
        (("EVAL", "return 1", 0), None),
        (("PING",), None),
        (("SCRIPT", "LOAD", "return 1"), None),
        ((b"get", b"k"), b"k"),
    ],
)
def test_the_key_a_command_is_routed_by(args, key):
    assert command_key(args) == key


def _admission(tenant_id: int) -> Admission:
    return Admission(tenant_id, tenant_id * 10 + 3, int(time.time() // 60), "202611", 500, "lease", "hold", 9_000)


@pytest.mark.parametrize("tenant_id", [1, 7, 42, 1000, 65_537, 10**9 + 7])
def test_every_script_call_of_the_gateway_touches_one_slot(tenant_id):
    adm = _admission(tenant_id)
    admission_keys = _keys(adm)
    settle_keys, _ = settle_call(adm, charge_micros=1, tokens_used=1)
    hedge_keys = [rk.rate_window(tenant_id, "tenant", adm.minute), rk.hedge_window(tenant_id, adm.minute)]
    for keys in (admission_keys, settle_keys, hedge_keys):
        assert command_slots(("EVALSHA", "sha", len(keys), *keys)) == {key_slot(rk.tenant_tag(tenant_id))}
    assert rk.tenant_hold_expiries(tenant_id) in admission_keys and rk.HOLD_EXPIRIES not in admission_keys
    assert rk.tenant_hold_expiries(tenant_id) in settle_keys and rk.HOLD_EXPIRIES not in settle_keys


def test_usage_shards_spread_over_slots():
    record = KeyRecord(key_id=1, tenant_id=5, tenant_slug="t", name="k", prefix="tw_", key_limits=Limits())
    streams = rk.usage_streams(8)
    assert len({key_slot(stream) for stream in streams}) == 8
    assert rk.usage_stream(rk.usage_shard(record.tenant_id, 8)) == "tw:usage:5"
