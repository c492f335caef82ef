from __future__ import annotations

import pytest


@pytest.mark.django_db
def test_healthz_reports_database_and_redis_ok(client, redis_client):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["components"]["database"]["status"] == "ok"
    assert body["components"]["redis"]["status"] == "ok"
    assert "backlog" in body["components"]["queues"]


def test_stdlib_platform_module_is_not_shadowed():
    import platform

    assert platform.system()
