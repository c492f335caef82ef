from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """PBKDF2 at production cost dominates these tests; the hasher is not what they check."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
