"""Websocket routes (Channels consumers for live updates)."""

from __future__ import annotations

from typing import Any

from channels.auth import AuthMiddlewareStack
from channels.security.websocket import AllowedHostsOriginValidator
from django.urls import path

from frontend.consumers import LeaderboardConsumer, TenantConsumer

websocket_urlpatterns: list[Any] = [
    path("ws/leaderboard/", AllowedHostsOriginValidator(LeaderboardConsumer.as_asgi())),
    path("ws/tenant/<slug:slug>/", AllowedHostsOriginValidator(AuthMiddlewareStack(TenantConsumer.as_asgi()))),
]
