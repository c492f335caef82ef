"""One row per change the gateway must learn about, written in the transaction of the change.

The bottom of the platform apps: it imports none of them, so tenants, keys, credentials and the catalog
can all write here; ``publishing`` (at the top) reads the rows and publishes to Redis.
"""

from __future__ import annotations

from django.db import models


class Topic(models.TextChoices):
    KEY = "key"  # one API key's record (key_id)
    TENANT_KEYS = "tenant_keys"  # every key of a tenant: limits, routing, billing mode, BYOK changed (tenant_id)
    ALL_KEYS = "all_keys"  # every key record (a credential re-encryption, startup)
    CATALOG = "catalog"  # the catalog snapshot
    BALANCE_ENSURE = "balance_ensure"  # a tenant's spendable counter initialised from the ledger (tenant_id)
    BALANCE_ADJUST = "balance_adjust"  # the counter moved by delta_micros (credit limit changed), applied once


class OutboxRow(models.Model):
    topic = models.CharField(max_length=32, choices=Topic.choices)
    tenant_id = models.BigIntegerField(null=True, blank=True)
    key_id = models.BigIntegerField(null=True, blank=True)
    delta_micros = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    published_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True, default="")

    class Meta:
        indexes = [
            models.Index(fields=["id"], name="outbox_pending_idx", condition=models.Q(published_at__isnull=True))
        ]

    def __str__(self) -> str:
        return f"{self.topic} tenant={self.tenant_id} key={self.key_id} #{self.pk}"
