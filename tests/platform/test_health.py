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


@pytest.mark.django_db
def test_healthz_is_503_when_the_database_is_unreachable(client, redis_client):
    from django.db import connection

    from devtools.devstack import free_port

    original = dict(connection.settings_dict)
    connection.close()
    connection.settings_dict.update({"HOST": "127.0.0.1", "PORT": str(free_port()), "OPTIONS": {"connect_timeout": 1}})
    try:
        response = client.get("/healthz")
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(original)
    assert response.status_code == 503
    assert response.json()["components"]["database"]["status"] == "down"
