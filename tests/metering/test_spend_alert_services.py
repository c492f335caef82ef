"""metering.services.spend_alert_add / spend_alert_remove: a tenant's own alerts only."""

from __future__ import annotations

import pytest

from metering.models import SpendAlert
from metering.services import SpendAlertError, spend_alert_add, spend_alert_remove

pytestmark = pytest.mark.django_db


def test_an_alert_is_added_for_the_tenant_with_its_threshold_and_email(tenant):
    alert = spend_alert_add(tenant=tenant, threshold_micros=20_000_000, email="ops@acme.test")
    stored = SpendAlert.objects.get()
    assert (stored.pk, stored.tenant_id, stored.threshold_micros, stored.email) == (
        alert.pk,
        tenant.pk,
        20_000_000,
        "ops@acme.test",
    )
    assert stored.last_fired_month == ""


@pytest.mark.parametrize("threshold", [0, -1])
def test_a_threshold_that_is_not_positive_is_refused_and_nothing_is_stored(tenant, threshold):
    with pytest.raises(SpendAlertError):
        spend_alert_add(tenant=tenant, threshold_micros=threshold)
    assert not SpendAlert.objects.exists()


def test_the_tenant_removes_its_own_alert(tenant):
    alert = spend_alert_add(tenant=tenant, threshold_micros=5_000_000)
    assert spend_alert_remove(tenant=tenant, alert_id=alert.pk) is True
    assert not SpendAlert.objects.exists()
    assert spend_alert_remove(tenant=tenant, alert_id=alert.pk) is False


def test_another_tenants_alert_is_not_removed(tenant, other_tenant):
    theirs = spend_alert_add(tenant=other_tenant, threshold_micros=5_000_000)
    assert spend_alert_remove(tenant=tenant, alert_id=theirs.pk) is False
    assert SpendAlert.objects.filter(pk=theirs.pk, tenant=other_tenant).exists()
