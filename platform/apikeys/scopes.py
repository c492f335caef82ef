"""A key never carries more rights than its creator (see docs/permissions.md, "Key scopes").

- reading usage/spend with the key (``usage_read``) needs ``key.grant_usage_read`` (owner, admin);
- a key without a model allow-list needs ``key.grant_any_model``;
- models named in an allow-list must exist in the catalog.
"""

from __future__ import annotations

from collections.abc import Sequence

from accounts.models import User
from catalog.models import Model
from foundation.api_errors import ApiError
from tenants.models import Membership, Tenant
from tenants.permissions import Action, can


def check_scopes_within_role(
    *, tenant: Tenant, user: User | None, allowed_models: Sequence[str] | None, usage_read: bool | None
) -> bool:
    """Raise ``scope_exceeds_role`` when asked for more; return the effective ``usage_read``."""
    if allowed_models is not None:
        known = set(Model.objects.filter(slug__in=list(allowed_models)).values_list("slug", flat=True))
        missing = sorted(set(allowed_models) - known)
        if missing:
            raise ApiError("unknown_model", f"unknown model {missing[0]!r}", param="allowed_models")
    if user is None:  # operator (management command, seed): full rights
        return True if usage_read is None else usage_read
    role = Membership.objects.filter(tenant=tenant, user=user).values_list("role", flat=True).first()
    if role is None:
        raise ApiError("permission_denied", "the creator is not a member of this tenant", status_code=403)
    may_read_usage = can(role, Action.KEY_GRANT_USAGE_READ)
    if usage_read and not may_read_usage:
        raise ApiError(
            "scope_exceeds_role", "your role may not issue keys that read usage", param="usage_read", status_code=403
        )
    if allowed_models is None and not can(role, Action.KEY_GRANT_ANY_MODEL):
        raise ApiError(
            "scope_exceeds_role", "your role must name the allowed models", param="allowed_models", status_code=403
        )
    return may_read_usage if usage_read is None else usage_read
