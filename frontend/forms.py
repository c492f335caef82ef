"""Console forms. Each validation error names the field and what to do about it."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms
from django.core.validators import RegexValidator
from django.utils.translation import gettext_lazy as _

from contracts.usage import MICROS_PER_UNIT
from tenants.selectors import Role, RouteMode

SLUG_HELP = _("Lowercase letters, digits and hyphens, 3–63 characters; used in URLs.")
EXPIRY_CHOICES = [
    ("", _("Never")),
    ("7", _("In 7 days")),
    ("30", _("In 30 days")),
    ("90", _("In 90 days")),
    ("365", _("In a year")),
]


def usd_to_micros(amount: Decimal | None) -> int | None:
    return None if amount is None else int(amount * MICROS_PER_UNIT)


class TenantForm(forms.Form):
    name = forms.CharField(label=_("Organisation name"), max_length=200)
    slug = forms.CharField(
        label=_("Short name"),
        min_length=3,
        max_length=63,
        help_text=SLUG_HELP,
        validators=[
            RegexValidator(
                r"^[a-z0-9][a-z0-9-]*$",
                _("Use only lowercase letters, digits and hyphens, starting with a letter or digit."),
            )
        ],
    )


class KeyForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=100, help_text=_("Where the key is used, e.g. “prod backend”."))
    allowed_models = forms.CharField(
        label=_("Allowed models"), required=False, help_text=_("Comma-separated model slugs; empty allows every model.")
    )
    usage_read = forms.BooleanField(label=_("May read usage and spend (GET /api/v1/key)"), required=False)
    rpm_limit = forms.IntegerField(label=_("Requests per minute"), required=False, min_value=1)
    tpm_limit = forms.IntegerField(label=_("Tokens per minute"), required=False, min_value=1)
    max_concurrency = forms.IntegerField(label=_("Concurrent requests"), required=False, min_value=1)
    monthly_budget = forms.DecimalField(
        label=_("Monthly budget (USD)"), required=False, min_value=Decimal("0.01"), decimal_places=2
    )
    expires_in = forms.ChoiceField(label=_("Expires"), required=False, choices=EXPIRY_CHOICES)

    def clean_allowed_models(self) -> list[str] | None:
        raw = self.cleaned_data["allowed_models"]
        models = [m.strip() for m in raw.split(",") if m.strip()]
        return models or None


class InviteForm(forms.Form):
    email = forms.EmailField(label=_("Email"))
    role = forms.ChoiceField(label=_("Role"), choices=Role.choices, initial=Role.DEVELOPER)


class RoutingForm(forms.Form):
    default_route_mode = forms.ChoiceField(label=_("Default route mode"), choices=RouteMode.choices)
    allowed_providers = forms.MultipleChoiceField(
        label=_("Only these providers"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Leave all unticked to allow every provider."),
    )
    blocked_providers = forms.MultipleChoiceField(
        label=_("Never these providers"), required=False, widget=forms.CheckboxSelectMultiple
    )

    def __init__(self, *args: Any, providers: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["allowed_providers"].choices = providers  # type: ignore[attr-defined]
        self.fields["blocked_providers"].choices = providers  # type: ignore[attr-defined]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        both = set(data.get("allowed_providers") or []) & set(data.get("blocked_providers") or [])
        if both:
            self.add_error(
                "blocked_providers",
                _("A provider cannot be both allowed and blocked: %(p)s.") % {"p": ", ".join(sorted(both))},
            )
        return data


class CredentialForm(forms.Form):
    provider = forms.ChoiceField(label=_("Provider"))
    secret = forms.CharField(
        label=_("Provider API key"),
        widget=forms.PasswordInput,
        min_length=8,
        help_text=_("Stored encrypted; never shown again."),
    )
    base_url = forms.CharField(label=_("Base URL (optional)"), required=False, max_length=500)

    def __init__(self, *args: Any, providers: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["provider"].choices = providers  # type: ignore[attr-defined]


class AlertForm(forms.Form):
    threshold = forms.DecimalField(
        label=_("Alert when this month’s spend reaches (USD)"), min_value=Decimal("1"), decimal_places=2
    )
    email = forms.EmailField(label=_("Send to (optional)"), required=False)


class TopUpForm(forms.Form):
    amount = forms.DecimalField(
        label=_("Amount (USD)"),
        min_value=Decimal("5"),
        max_value=Decimal("10000"),
        decimal_places=2,
        error_messages={
            "min_value": _("The smallest top-up is $5."),
            "max_value": _("The largest top-up is $10,000; contact us for more."),
        },
    )
