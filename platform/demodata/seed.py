"""The demo tenant, users and API key (``python manage.py seed_demo``). Idempotent."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction

from accounts.models import User
from apikeys.models import ApiKey
from apikeys.selectors import usable_key_for_plaintext
from apikeys.services import api_key_issue
from tenants.models import Membership, Role, Tenant

DEMO_TENANT_SLUG = "demo"
DEMO_TENANT_NAME = "Demo"
DEMO_EMAIL, DEMO_PASSWORD = "demo@tokenway.local", "demo-password-123"
ADMIN_EMAIL, ADMIN_PASSWORD = "admin@tokenway.local", "admin-password-123"
DEMO_KEY_NAME = "demo"


@dataclass(frozen=True)
class DemoSeed:
    tenant: Tenant
    user: User
    api_key: ApiKey
    key_created: bool

    def __repr__(self) -> str:
        return f"DemoSeed(tenant={self.tenant.slug!r}, key_created={self.key_created})"


def demo_key_path() -> Path:
    return Path(settings.DATA_DIR) / "demo-api-key"


def _user(email: str, password: str, *, superuser: bool) -> User:
    user = User.objects.filter(email=email).first()
    if user is not None:
        return user
    if superuser:
        return User.objects.create_superuser(email, password, name="Operator")
    return User.objects.create_user(email, password, name="Demo Developer")


def _existing_key(tenant: Tenant) -> ApiKey | None:
    try:
        plaintext = demo_key_path().read_text(encoding="utf-8").strip()
    except OSError:
        return None
    api_key = usable_key_for_plaintext(plaintext, pepper=settings.API_KEY_PEPPER)
    return api_key if api_key is not None and api_key.tenant_id == tenant.pk else None


def seed_demo() -> DemoSeed:
    with transaction.atomic():
        _user(ADMIN_EMAIL, ADMIN_PASSWORD, superuser=True)
        user = _user(DEMO_EMAIL, DEMO_PASSWORD, superuser=False)
        tenant, _ = Tenant.objects.get_or_create(slug=DEMO_TENANT_SLUG, defaults={"name": DEMO_TENANT_NAME})
        Membership.objects.get_or_create(tenant=tenant, user=user, defaults={"role": Role.OWNER})
        api_key = _existing_key(tenant)
        if api_key is not None:
            return DemoSeed(tenant=tenant, user=user, api_key=api_key, key_created=False)
        issued = api_key_issue(tenant=tenant, created_by=user, name=DEMO_KEY_NAME)
        path = demo_key_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(issued.plaintext + "\n", encoding="utf-8")
        path.chmod(0o600)
    return DemoSeed(tenant=tenant, user=user, api_key=issued.api_key, key_created=True)
