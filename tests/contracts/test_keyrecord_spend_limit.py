"""The key record gained the tenant's monthly spend limit in place (version 1): records written before it
read as "no limit", and a field a newer platform adds is ignored rather than refused."""

from __future__ import annotations

import orjson

from contracts.keyrecord import KEY_RECORD_VERSION, KeyRecord


def _record(**kw: object) -> KeyRecord:
    return KeyRecord(key_id=1, tenant_id=2, tenant_slug="acme", name="ci", prefix="tw_live_AbCd", **kw)  # type: ignore[arg-type]


def test_the_spend_limit_round_trips_and_an_older_record_has_none():
    limited = _record(tenant_monthly_spend_limit_micros=1)
    assert KeyRecord.from_json(limited.to_json()) == limited
    older = orjson.loads(limited.to_json())
    del older["tenant_monthly_spend_limit_micros"]
    assert older["version"] == KEY_RECORD_VERSION
    assert KeyRecord.from_json(orjson.dumps(older)).tenant_monthly_spend_limit_micros is None


def test_a_field_a_newer_platform_adds_is_ignored():
    newer = {**orjson.loads(_record().to_json()), "some_future_limit": 5}
    assert KeyRecord.from_json(orjson.dumps(newer)) == _record()
