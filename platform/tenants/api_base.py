"""Base for every tenant-scoped API view: resolve the caller's membership first (foreign -> 404),
then check the permission matrix (member without the right -> 403 ``permission_denied``).
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.views import APIView

from foundation.api_errors import ApiError
from tenants.models import Membership
from tenants.permissions import Action, can
from tenants.selectors import membership_get


class TenantScopedView(APIView):
    membership: Membership

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # authentication first: anonymous -> 401/403
        self.membership = membership_get(user=request.user, tenant_slug=kwargs["tenant_slug"])  # type: ignore[arg-type]

    def allows(self, action: Action) -> bool:
        return can(self.membership.role, action)

    def require(self, action: Action) -> None:
        if not self.allows(action):
            raise ApiError(
                "permission_denied", f"your role ({self.membership.role}) may not do {action.value}", status_code=403
            )


class StrictSerializer(serializers.Serializer[Any]):
    """Input serializer that refuses fields it does not know (typos must not be silently ignored)."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {unknown[0]: [serializers.ErrorDetail("is not a known field", code="unknown_field")]}
                )
        return super().to_internal_value(data)
