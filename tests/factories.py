"""factory_boy factories for the platform's models."""

from __future__ import annotations

import factory
from django.conf import settings

from accounts.models import User
from apikeys.models import ApiKey
from catalog.models import Model, Offering, OfferingPrice, Provider
from contracts.apikey_format import generate_key, hash_key
from tenants.models import Membership, Role, Tenant

PASSWORD = "correct-horse-battery-9"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        skip_postgeneration_save = True

    email = factory.Sequence(lambda n: f"user{n}@example.test")
    name = factory.Faker("name")
    password = factory.PostGenerationMethodCall("set_password", PASSWORD)

    @factory.post_generation
    def _save(obj, create, extracted, **kwargs):
        if create:
            obj.save()


class TenantFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Tenant

    slug = factory.Sequence(lambda n: f"tenant-{n}")
    name = factory.Sequence(lambda n: f"Tenant {n}")


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    tenant = factory.SubFactory(TenantFactory)
    user = factory.SubFactory(UserFactory)
    role = Role.DEVELOPER


class ApiKeyFactory(factory.django.DjangoModelFactory):
    """A key row with a random (unknown) plaintext; use ``issue_key`` when the plaintext matters."""

    class Meta:
        model = ApiKey

    tenant = factory.SubFactory(TenantFactory)
    name = factory.Sequence(lambda n: f"key {n}")
    key_hash = factory.LazyFunction(lambda: hash_key(generate_key(), settings.API_KEY_PEPPER))
    prefix = "tw_live_AbCd"
    last_four = "wxyz"


def issue_key(tenant: Tenant, **kwargs) -> tuple[ApiKey, str]:
    """Issue through the service (operator rights unless created_by is given); returns (row, plaintext)."""
    from apikeys.services import api_key_issue

    kwargs.setdefault("created_by", None)
    kwargs.setdefault("name", "test key")
    issued = api_key_issue(tenant=tenant, **kwargs)
    return issued.api_key, issued.plaintext


class ProviderFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Provider

    slug = factory.Sequence(lambda n: f"provider-{n}")
    name = factory.Sequence(lambda n: f"Provider {n}")
    base_url = factory.LazyAttribute(lambda o: f"http://127.0.0.1:8100/{o.slug}/v1")
    dialect = "openai"


class ModelFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Model

    slug = factory.Sequence(lambda n: f"model-{n}")
    name = factory.Sequence(lambda n: f"Model {n}")
    context_window = 131072
    max_output = 8192


class OfferingFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Offering

    model = factory.SubFactory(ModelFactory)
    provider = factory.SubFactory(ProviderFactory)
    upstream_model = factory.LazyAttribute(lambda o: o.model.slug)
    context_window = 131072
    max_output = 8192


class OfferingPriceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = OfferingPrice

    offering = factory.SubFactory(OfferingFactory)
    version = 1
    input = 1_000_000
    output = 2_000_000
