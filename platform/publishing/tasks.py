"""The periodic outbox drain: publishes what the on-commit drain could not (Redis was down)."""

from __future__ import annotations

from celery import shared_task

from publishing.beat import DRAIN_EVERY_S
from publishing.drain import outbox_drain, outbox_prune


@shared_task(name="publishing.outbox_drain", ignore_result=True, expires=DRAIN_EVERY_S * 2)
def outbox_drain_task() -> int:
    published = outbox_drain()
    outbox_prune()
    return published
