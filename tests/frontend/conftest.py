"""Personas and a small catalog for the frontend tests."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from accounts.models import User
from catalog.models import Model, Offering, OfferingPrice, Provider
from tenants.models import Membership, Role, Tenant

PASSWORD = "correct-horse-battery-staple"


@dataclass
class Personas:
    tenant: Tenant
    other_tenant: Tenant
    owner: User
    developer: User
    outsider: User
    staff: User


def make_user(email: str, **extra: object) -> User:
    return User.objects.create_user(email=email, password=PASSWORD, **extra)


@pytest.fixture
def personas(db) -> Personas:
    tenant = Tenant.objects.create(slug="acme", name="Acme")
    other = Tenant.objects.create(slug="globex", name="Globex")
    owner, developer, outsider = make_user("owner@acme.test"), make_user("dev@acme.test"), make_user("boss@globex.test")
    staff = make_user("ops@tokenway.test", is_staff=True)
    Membership.objects.create(tenant=tenant, user=owner, role=Role.OWNER)
    Membership.objects.create(tenant=tenant, user=developer, role=Role.DEVELOPER)
    Membership.objects.create(tenant=other, user=outsider, role=Role.OWNER)
    return Personas(tenant, other, owner, developer, outsider, staff)


def _provider(slug: str, name: str, **extra: object) -> Provider:
    return Provider.objects.create(
        slug=slug, name=name, base_url=f"http://127.0.0.1:8100/{slug}/v1", dialect="openai", **extra
    )


@pytest.fixture
def catalog(db) -> list[Offering]:
    deepseek = _provider("deepseek", "DeepSeek")
    silicon = _provider("siliconflow", "SiliconFlow")
    anthropic = Provider.objects.create(
        slug="anthropic",
        name="Anthropic",
        base_url="http://127.0.0.1:8100/anthropic/v1",
        dialect="anthropic",
        keeps_billing_block=True,
    )
    flash = Model.objects.create(
        slug="deepseek-v4-flash", name="DeepSeek V4 Flash", context_window=128000, max_output=8192
    )
    sonnet = Model.objects.create(
        slug="claude-sonnet-4.5", name="Claude Sonnet 4.5", context_window=200000, max_output=64000
    )
    offerings = []
    for model, provider, price_in in (
        (flash, deepseek, 270_000),
        (flash, silicon, 300_000),
        (sonnet, anthropic, 3_000_000),
    ):
        offering = Offering.objects.create(
            model=model,
            provider=provider,
            upstream_model=model.slug,
            context_window=model.context_window,
            max_output=model.max_output,
        )
        OfferingPrice.objects.create(
            offering=offering, version=1, input=price_in, output=price_in * 4, cache_read=price_in // 10
        )
        offerings.append(offering)
    return offerings
