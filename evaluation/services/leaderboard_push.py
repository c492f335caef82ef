"""Tell open leaderboard pages that new statistics are out (Channels group LEADERBOARD_GROUP)."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from contracts.redis_keys import LEADERBOARD_GROUP

MESSAGE_TYPE = "leaderboard.update"  # consumers implement leaderboard_update(self, event)


def leaderboard_message(*, version: int, generated_at: float, incidents_open: int) -> dict[str, Any]:
    return {"type": MESSAGE_TYPE, "version": version, "generated_at": generated_at, "incidents_open": incidents_open}


def leaderboard_notify(*, version: int, generated_at: float, incidents_open: int) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    async_to_sync(layer.group_send)(
        LEADERBOARD_GROUP,
        leaderboard_message(version=version, generated_at=generated_at, incidents_open=incidents_open),
    )
