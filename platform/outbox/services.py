"""Write an outbox row inside the caller's transaction; drain it once that transaction commits.

A rolled-back change leaves no row and publishes nothing. The drain itself belongs to ``publishing``,
which registers it here at startup (``drainer_set``): this app stays below every app that writes to it.
Rows the on-commit drain could not publish (Redis down) stay pending for the periodic drain task.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import transaction

from outbox.models import OutboxRow, Topic

logger = logging.getLogger(__name__)
_drainer: Callable[[], int] | None = None


def drainer_set(drain: Callable[[], int]) -> None:
    global _drainer
    _drainer = drain


def outbox_add(
    *, topic: Topic, tenant_id: int | None = None, key_id: int | None = None, delta_micros: int = 0
) -> OutboxRow:
    row = OutboxRow.objects.create(topic=topic, tenant_id=tenant_id, key_id=key_id, delta_micros=delta_micros)
    transaction.on_commit(_drain_now)
    return row


def _drain_now() -> None:
    if _drainer is not None:
        _drainer()
