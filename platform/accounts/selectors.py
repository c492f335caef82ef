"""Reads on accounts."""

from __future__ import annotations

from accounts.models import User


def user_exists(*, email: str) -> bool:
    return User.objects.filter(email__iexact=email).exists()
