"""Writes on API keys. Each change writes an outbox row; publishing sends the record to the gateway after commit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from accounts.models import User
from apikeys.models import ApiKey
from apikeys.scopes import check_scopes_within_role
from contracts.apikey_format import display_prefix, generate_key, hash_key, last_four
from foundation.api_errors import ApiError
from outbox.models import Topic
from outbox.services import outbox_add
from tenants.models import Tenant

LIMIT_FIELDS = frozenset(
    {"name", "rpm_limit", "tpm_limit", "max_concurrency", "monthly_budget_micros", "expires_at", "default_route_mode",
     "model_family_fallback"}
)  # fmt: skip


@dataclass(frozen=True)
class IssuedKey:
    api_key: ApiKey
    plaintext: str  # shown once, never stored

    def __repr__(self) -> str:  # keep the plaintext out of logs and tracebacks
        return f"IssuedKey(api_key={self.api_key!r})"


def _key_changed(api_key: ApiKey) -> None:
    """Inside the change's transaction: its record is published once that commits (nothing if it rolls back)."""
    outbox_add(topic=Topic.KEY, tenant_id=api_key.tenant_id, key_id=api_key.pk)


def api_key_issue(
    *,
    tenant: Tenant,
    created_by: User | None,
    name: str,
    live: bool = True,
    allowed_models: Sequence[str] | None = None,
    allowed_route_modes: Sequence[str] | None = None,
    usage_read: bool | None = None,
    default_route_mode: str = "",
    rpm_limit: int | None = None,
    tpm_limit: int | None = None,
    max_concurrency: int | None = None,
    monthly_budget_micros: int | None = None,
    expires_at: datetime | None = None,
    rotated_from: ApiKey | None = None,
    model_family_fallback: bool | None = None,
) -> IssuedKey:
    """Issue a key whose scopes stay within the creator's role (None creator = operator/command)."""
    usage_read = check_scopes_within_role(
        tenant=tenant, user=created_by, allowed_models=allowed_models, usage_read=usage_read
    )
    plaintext = generate_key(live=live)
    with transaction.atomic():
        api_key = ApiKey.objects.create(
            tenant=tenant,
            created_by=created_by,
            name=name,
            key_hash=hash_key(plaintext, settings.API_KEY_PEPPER),
            prefix=display_prefix(plaintext),
            last_four=last_four(plaintext),
            live=live,
            allowed_models=list(allowed_models) if allowed_models is not None else None,
            allowed_route_modes=list(allowed_route_modes) if allowed_route_modes is not None else None,
            usage_read=usage_read,
            default_route_mode=default_route_mode,
            rpm_limit=rpm_limit,
            tpm_limit=tpm_limit,
            max_concurrency=max_concurrency,
            monthly_budget_micros=monthly_budget_micros,
            expires_at=expires_at,
            rotated_from=rotated_from,
            model_family_fallback=model_family_fallback,
        )
        _key_changed(api_key)
    return IssuedKey(api_key=api_key, plaintext=plaintext)


def api_key_revoke(*, key: ApiKey) -> ApiKey:
    with transaction.atomic():
        if key.revoked_at is None:
            key.revoked_at = timezone.now()
            key.save(update_fields=["revoked_at"])
        _key_changed(key)
    return key


def _extends_expiry(key: ApiKey, fields: dict[str, Any]) -> bool:
    if "expires_at" not in fields or key.expires_at is None:
        return False
    new = fields["expires_at"]
    return new is None or new > key.expires_at


def api_key_update_limits(*, key: ApiKey, may_extend_expiry: bool = False, **fields: Any) -> ApiKey:
    """Limits and expiry. A revoked key is final; a rotated key's grace end is final; only roles that
    may extend expiry (``may_extend_expiry``) can move it later or clear it."""
    unknown = set(fields) - LIMIT_FIELDS
    if unknown:
        raise TypeError(f"api_key_update_limits got unknown fields {sorted(unknown)}")
    if key.revoked_at is not None:
        raise ApiError("key_revoked", "a revoked key cannot be changed", status_code=409)
    if _extends_expiry(key, fields):
        if ApiKey.objects.filter(rotated_from=key).exists():
            raise ApiError(
                "key_rotated", "a rotated key's grace period cannot be extended", param="expires_at", status_code=409
            )
        if not may_extend_expiry:
            raise ApiError(
                "permission_denied", "only owners and admins can extend or clear a key's expiry",
                param="expires_at", status_code=403,
            )  # fmt: skip
    with transaction.atomic():
        for name, value in fields.items():
            setattr(key, name, value)
        key.save(update_fields=list(fields) or None)
        _key_changed(key)
    return key


def api_keys_touch(*, last_used: dict[int, datetime]) -> int:
    """Move each key's ``last_used_at`` forward to the given time, never back (GREATEST): one statement for
    the whole batch (the usage consumer's). Race: two consumers touching overlapping keys would lock rows
    in join order and could deadlock, so the rows are locked in id order first. No publish: the gateway
    does not read this field. Returns the number of keys moved."""
    if not last_used:
        return 0
    ids = sorted(last_used)
    table = ApiKey._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH v AS (SELECT * FROM unnest(%s::bigint[], %s::timestamptz[]) AS v(id, at)), "  # noqa: S608 - own table
            f"locked AS (SELECT k.id FROM {table} k JOIN v USING (id) ORDER BY k.id FOR UPDATE) "
            f"UPDATE {table} AS k SET last_used_at = GREATEST(k.last_used_at, v.at) FROM v "
            "WHERE k.id = v.id AND k.id IN (SELECT id FROM locked) AND (k.last_used_at IS NULL OR k.last_used_at < v.at)",
            [ids, [last_used[i] for i in ids]],
        )
        return int(cursor.rowcount)


def api_key_rotate(*, key: ApiKey, grace_until: datetime, rotated_by: User | None = None) -> IssuedKey:
    """New key with the same settings; the old one stays valid until ``grace_until``."""
    with transaction.atomic():
        old = ApiKey.objects.select_for_update().get(pk=key.pk)  # one rotation at a time per key
        if old.revoked_at is not None:
            raise ApiError("key_revoked", "a revoked key cannot be rotated")
        issued = api_key_issue(
            tenant=old.tenant,
            created_by=rotated_by,  # None: operator rotation, scopes copied as they are
            name=old.name,
            live=old.live,
            allowed_models=old.allowed_models,
            allowed_route_modes=old.allowed_route_modes,
            usage_read=old.usage_read,
            default_route_mode=old.default_route_mode,
            rpm_limit=old.rpm_limit,
            tpm_limit=old.tpm_limit,
            max_concurrency=old.max_concurrency,
            monthly_budget_micros=old.monthly_budget_micros,
            expires_at=old.expires_at,
            rotated_from=old,
            model_family_fallback=old.model_family_fallback,
        )
        old.expires_at = min(grace_until, old.expires_at) if old.expires_at else grace_until
        old.save(update_fields=["expires_at"])
        _key_changed(old)
    key.refresh_from_db()
    return issued
