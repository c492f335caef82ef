"""Forms of the invitation page: sign up with the invited address, or sign in to that account."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import authenticate
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from accounts.forms import SignupForm
from accounts.models import User


class InvitationSignupForm(SignupForm):
    """Sign-up whose email is the invited address (fixed: a changed POST value is ignored)."""

    def __init__(self, *args: Any, email: str, **kwargs: Any) -> None:
        super().__init__(*args, initial={"email": email}, **kwargs)
        self.fields["email"].disabled = True
        self.fields["email"].label = _("Email")
        self.fields["name"].label = _("Your name")


class InvitationLoginForm(forms.Form):
    """The password of the invited address's existing account."""

    password = forms.CharField(label=_("Password"), strip=False, widget=forms.PasswordInput)

    def __init__(self, *args: Any, request: HttpRequest, email: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.request = request
        self.email = email
        self.user: User | None = None

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        user = authenticate(self.request, username=self.email, password=data.get("password", ""))
        if user is None:
            raise forms.ValidationError(_("Wrong password for %(email)s.") % {"email": self.email})
        self.user = user
        return data
