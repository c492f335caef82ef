"""Account forms: sign-up with email and password."""

from __future__ import annotations

from django.contrib.auth.forms import BaseUserCreationForm
from django.utils.translation import gettext_lazy as _

from accounts.models import User


class SignupForm(BaseUserCreationForm):
    class Meta:
        model = User
        fields = ("email", "name")
        labels = {"email": _("Email"), "name": _("Name")}

    def clean_email(self) -> str:
        email = str(self.cleaned_data["email"]).lower()
        if User.objects.filter(email=email).exists():
            self.add_error("email", _("An account with this email already exists."))
        return email
