"""Writes on accounts that other flows start: a new account that joins a tenant by invitation."""

from __future__ import annotations

from django.db import transaction

from accounts.models import User
from tenants.invitations import invitation_accept
from tenants.models import Membership


def user_signup_by_invitation(*, token: str, email: str, name: str, password: str) -> Membership:
    """Create the account and join in one transaction: a refused invitation leaves no account behind."""
    with transaction.atomic():
        user = User.objects.create_user(email=email, password=password, name=name)
        return invitation_accept(token=token, user=user)
