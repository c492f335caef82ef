"""The permission matrix: action -> roles allowed. Every view checks through ``can``.

docs/permissions.md is the prose version of this table; a test keeps them in sync.
"""

from __future__ import annotations

from enum import StrEnum

from tenants.models import Role

OWNER, ADMIN, DEVELOPER, BILLING, VIEWER = Role.OWNER, Role.ADMIN, Role.DEVELOPER, Role.BILLING, Role.VIEWER
EVERYONE = frozenset(Role)


class Action(StrEnum):
    TENANT_VIEW = "tenant.view"
    TENANT_UPDATE = "tenant.update"  # name, routing preferences, tenant limits
    TENANT_BILLING_UPDATE = "tenant.billing_update"  # billing mode, spend limit
    MEMBER_LIST = "member.list"
    MEMBER_CHANGE_ROLE = "member.change_role"
    MEMBER_REMOVE = "member.remove"
    INVITATION_MANAGE = "invitation.manage"  # create, list, revoke
    KEY_LIST = "key.list"
    KEY_CREATE = "key.create"
    KEY_MANAGE_OWN = "key.manage_own"  # update, rotate, revoke keys one created
    KEY_MANAGE_ANY = "key.manage_any"  # same for every key of the tenant
    KEY_EXTEND_EXPIRY = "key.extend_expiry"  # push a key's expiry later or clear it
    KEY_GRANT_USAGE_READ = "key.grant_usage_read"  # issue keys that may read usage/spend
    KEY_GRANT_ANY_MODEL = "key.grant_any_model"  # issue keys without a model allow-list
    CREDENTIAL_LIST = "credential.list"
    CREDENTIAL_MANAGE = "credential.manage"
    USAGE_VIEW = "usage.view"
    BILLING_VIEW = "billing.view"
    BILLING_MANAGE = "billing.manage"  # top-ups, payment methods


MATRIX: dict[Action, frozenset[Role]] = {
    Action.TENANT_VIEW: EVERYONE,
    Action.TENANT_UPDATE: frozenset({OWNER, ADMIN}),
    Action.TENANT_BILLING_UPDATE: frozenset({OWNER, BILLING}),
    Action.MEMBER_LIST: EVERYONE,
    Action.MEMBER_CHANGE_ROLE: frozenset({OWNER, ADMIN}),
    Action.MEMBER_REMOVE: frozenset({OWNER, ADMIN}),
    Action.INVITATION_MANAGE: frozenset({OWNER, ADMIN}),
    Action.KEY_LIST: frozenset({OWNER, ADMIN, DEVELOPER, VIEWER}),
    Action.KEY_CREATE: frozenset({OWNER, ADMIN, DEVELOPER}),
    Action.KEY_MANAGE_OWN: frozenset({OWNER, ADMIN, DEVELOPER}),
    Action.KEY_MANAGE_ANY: frozenset({OWNER, ADMIN}),
    Action.KEY_EXTEND_EXPIRY: frozenset({OWNER, ADMIN}),
    Action.KEY_GRANT_USAGE_READ: frozenset({OWNER, ADMIN}),
    Action.KEY_GRANT_ANY_MODEL: frozenset({OWNER, ADMIN, DEVELOPER}),
    Action.CREDENTIAL_LIST: frozenset({OWNER, ADMIN, DEVELOPER}),
    Action.CREDENTIAL_MANAGE: frozenset({OWNER, ADMIN}),
    Action.USAGE_VIEW: EVERYONE,
    Action.BILLING_VIEW: frozenset({OWNER, ADMIN, BILLING}),
    Action.BILLING_MANAGE: frozenset({OWNER, BILLING}),
}

# Only an owner may grant or take away the owner role; admins manage everyone below owner.
ROLE_RANK = {OWNER: 4, ADMIN: 3, BILLING: 2, DEVELOPER: 2, VIEWER: 1}


def can(role: str, action: Action) -> bool:
    return role in MATRIX[action]


def may_assign_role(actor_role: str, target_role: str) -> bool:
    """Owners assign any role; admins assign any role except owner."""
    if actor_role == OWNER:
        return True
    return actor_role == ADMIN and target_role != OWNER
