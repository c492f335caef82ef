"""Live updates over Channels. Other domains ``group_send`` to these groups; we forward to the browser.

Any message type other than the websocket ones is forwarded as ``{"event": <type>, "data": <payload>}``,
so a domain can add an event kind without a change here.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.http import Http404

from contracts.redis_keys import LEADERBOARD_GROUP, tenant_group
from tenants.selectors import membership_get


class _ForwardingConsumer(AsyncJsonWebsocketConsumer):  # type: ignore[misc]  # Channels ships no types
    group: str = ""

    async def dispatch(self, message: dict[str, Any]) -> None:
        if message["type"].startswith("websocket."):
            await super().dispatch(message)
            return
        data = {k: v for k, v in message.items() if k != "type"}
        await self.send_json({"event": message["type"], "data": data})

    async def disconnect(self, code: int) -> None:
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)


class LeaderboardConsumer(_ForwardingConsumer):
    """Public: anyone may watch the leaderboard refresh."""

    async def connect(self) -> None:
        self.group = LEADERBOARD_GROUP
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self.send_json({"event": "hello"})


@database_sync_to_async  # type: ignore[untyped-decorator]  # Channels ships no types
def _tenant_id_for(user: Any, slug: str) -> int | None:
    if user is None or not user.is_authenticated:
        return None
    try:
        return membership_get(user=user, tenant_slug=slug).tenant_id
    except Http404:
        return None


class TenantConsumer(_ForwardingConsumer):
    """Members only: balance and usage events of one tenant. Others are closed with 4404."""

    async def connect(self) -> None:
        slug = self.scope["url_route"]["kwargs"]["slug"]
        tenant_id = await _tenant_id_for(self.scope.get("user"), slug)
        if tenant_id is None:
            await self.close(code=4404)
            return
        self.group = tenant_group(tenant_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self.send_json({"event": "hello"})
