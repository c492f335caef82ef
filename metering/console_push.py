"""Live updates to the console: balance and usage pushed to ``tenant_group(tid)`` after each batch."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from contracts.redis_keys import tenant_group
from contracts.usage import UsageEvent
from metering.alerts import spend_alerts_check
from metering.ingest import IngestResult
from metering.ledger import tenant_account_balance

logger = logging.getLogger(__name__)


PUSH_FROM_LOOP_WAIT_S = 2.0  # a push from a thread that hosts an event loop waits at most this long


def tenant_push(*, tenant_id: int, payload: dict[str, object]) -> None:
    """Best effort: a console that misses a push reloads from the API."""
    layer = get_channel_layer()
    if layer is None:
        return
    message = {"type": "billing.update", **payload}
    if _thread_runs_a_loop():
        # async_to_sync refuses to run here; send from a helper thread with its own loop.
        sender = threading.Thread(target=_send, args=(layer, tenant_id, message), name="tw-live-push")
        sender.start()
        sender.join(PUSH_FROM_LOOP_WAIT_S)
        return
    _send(layer, tenant_id, message)


def _thread_runs_a_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _send(layer: Any, tenant_id: int, message: dict[str, object]) -> None:
    try:
        async_to_sync(layer.group_send)(tenant_group(tenant_id), message)
    except (OSError, ConnectionError) as exc:
        logger.warning("live update for tenant %s failed: %s", tenant_id, exc)


def ingest_followup(result: IngestResult) -> None:
    """After a batch commits: push balance and usage to each tenant's console, then check spend alerts."""
    per_tenant: dict[int, list[UsageEvent]] = {}
    for event in result.inserted:
        per_tenant.setdefault(event.tenant_id, []).append(event)
    for tenant_id, events in per_tenant.items():
        payload: dict[str, object] = {
            "balance_micros": tenant_account_balance(tenant_id=tenant_id),
            "usage": {"requests": len(events), "charge_micros": sum(max(e.charge_micros, 0) for e in events)},
            "request_ids": [e.request_id for e in events[:20]],
        }
        tenant_push(tenant_id=tenant_id, payload=payload)
    if per_tenant:
        spend_alerts_check(tenant_ids=set(per_tenant))
