"""Celery tasks of the project itself (state that spans apps)."""

from __future__ import annotations

from celery import shared_task

from tokenway.beat import STATE_CHECK_EVERY_S
from tokenway.state_rebuild import redis_state_ensure


@shared_task(name="tokenway.tasks.redis_state_check", ignore_result=True, expires=STATE_CHECK_EVERY_S * 2)
def redis_state_check_task() -> bool:
    """Keys, snapshots and balances published again when Redis lost them (see state_rebuild)."""
    return redis_state_ensure()
