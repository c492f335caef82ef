"""Websocket consumers (Channels' WebsocketCommunicator over the real routing and Redis channel layer)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels import DEFAULT_CHANNEL_LAYER
from channels.layers import channel_layers, get_channel_layer
from channels.routing import URLRouter
from django.db import connections
from django.test import Client

from contracts.redis_keys import LEADERBOARD_GROUP, tenant_group
from frontend.ws_urls import websocket_urlpatterns
from metering.console_push import tenant_push
from tests.frontend.ws import WebsocketCommunicator

pytestmark = pytest.mark.django_db(transaction=True)
ORIGIN = (b"origin", b"http://127.0.0.1")
TIMEOUT = 5


def in_own_loop(scenario: Any, **kwargs: Any) -> None:
    """Run an async scenario on a fresh event loop in its own thread: the browser tests' Playwright
    keeps a loop running in the main thread for the rest of the session."""
    failures: list[BaseException] = []

    async def isolated() -> None:
        # Own channel layer instance: the session's live server may still hold the shared one on its loop.
        fresh = channel_layers.make_backend(DEFAULT_CHANNEL_LAYER)
        previous = channel_layers.set(DEFAULT_CHANNEL_LAYER, fresh)
        try:
            await scenario(**kwargs)
            await _end_consumers()  # every consumer runs to its end before the loop does
        finally:
            if previous is None:
                channel_layers.backends.pop(DEFAULT_CHANNEL_LAYER, None)
            else:
                channel_layers.set(DEFAULT_CHANNEL_LAYER, previous)
            for task in asyncio.all_tasks() - {asyncio.current_task()}:
                task.cancel()
            await fresh.close_pools()
            await sync_to_async(connections.close_all)()  # the executor thread's connection

    def run() -> None:
        try:
            asyncio.run(isolated())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread below
            failures.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive(), "scenario did not finish"
    if failures:
        raise failures[0]


# The scenario's sockets; a refused one's consumer still waits for the client's disconnect.
_OPENED: list[WebsocketCommunicator] = []


def _communicator(path: str, headers: list[tuple[bytes, bytes]]) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path, headers=headers)
    _OPENED.append(communicator)
    return communicator


async def _end_consumers() -> None:
    """Send the client's disconnect to every socket still running and wait for its consumer to return."""
    while _OPENED:
        communicator = _OPENED.pop()
        if not communicator.future.done():
            await communicator.disconnect(timeout=TIMEOUT)


def _session_cookie(user: Any) -> tuple[bytes, bytes]:
    client = Client()
    client.force_login(user)
    return (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())


async def _connect(path: str, *headers: tuple[bytes, bytes]) -> tuple[WebsocketCommunicator, bool, Any]:
    communicator = _communicator(path, [ORIGIN, *headers])
    connected, code = await communicator.connect(timeout=TIMEOUT)
    return communicator, connected, code


async def _leaderboard_group_message_reaches_an_anonymous_client(redis_client):
    ws, connected, _ = await _connect("/ws/leaderboard/")
    assert connected
    assert await ws.receive_json_from(timeout=TIMEOUT) == {"event": "hello"}
    await get_channel_layer().group_send(LEADERBOARD_GROUP, {"type": "leaderboard.refresh", "window": "1h"})
    assert await ws.receive_json_from(timeout=TIMEOUT) == {"event": "leaderboard.refresh", "data": {"window": "1h"}}
    await ws.disconnect()


async def _leaderboard_refuses_a_foreign_origin(redis_client):
    ws = _communicator("/ws/leaderboard/", [(b"origin", b"https://evil.example")])
    connected, _ = await ws.connect(timeout=TIMEOUT)
    assert not connected


async def _tenant_socket_closes_4404_for_anonymous(personas, redis_client):
    _, connected, code = await _connect("/ws/tenant/acme/")
    assert (connected, code) == (False, 4404)


async def _tenant_socket_closes_4404_for_another_tenants_owner(personas, redis_client):
    cookie = await sync_to_async(_session_cookie)(personas.outsider)
    _, connected, code = await _connect("/ws/tenant/acme/", cookie)
    assert (connected, code) == (False, 4404)
    _, connected, code = await _connect("/ws/tenant/no-such-tenant/", cookie)
    assert (connected, code) == (False, 4404)


async def _member_receives_billing_updates_pushed_by_metering(personas, redis_client):
    cookie = await sync_to_async(_session_cookie)(personas.developer)
    ws, connected, _ = await _connect("/ws/tenant/acme/", cookie)
    assert connected
    assert await ws.receive_json_from(timeout=TIMEOUT) == {"event": "hello"}
    payload = {"balance_micros": 9_999_487, "usage": {"requests": 1, "charge_micros": 513}, "request_ids": ["req_1"]}
    await sync_to_async(tenant_push)(tenant_id=personas.tenant.pk, payload=payload)
    assert await ws.receive_json_from(timeout=TIMEOUT) == {"event": "billing.update", "data": payload}
    await get_channel_layer().group_send(tenant_group(personas.other_tenant.pk), {"type": "billing.update"})
    assert await ws.receive_nothing(timeout=0.3)  # another tenant's push never arrives here
    await ws.disconnect()


def test_leaderboard_group_message_reaches_an_anonymous_client(redis_client):
    in_own_loop(_leaderboard_group_message_reaches_an_anonymous_client, redis_client=redis_client)


def test_leaderboard_refuses_a_foreign_origin(redis_client):
    in_own_loop(_leaderboard_refuses_a_foreign_origin, redis_client=redis_client)


def test_tenant_socket_closes_4404_for_anonymous(personas, redis_client):
    in_own_loop(_tenant_socket_closes_4404_for_anonymous, personas=personas, redis_client=redis_client)


def test_tenant_socket_closes_4404_for_another_tenants_owner(personas, redis_client):
    in_own_loop(_tenant_socket_closes_4404_for_another_tenants_owner, personas=personas, redis_client=redis_client)


def test_member_receives_billing_updates_pushed_by_metering(personas, redis_client):
    in_own_loop(_member_receives_billing_updates_pushed_by_metering, personas=personas, redis_client=redis_client)
