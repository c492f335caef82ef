"""Encryption of BYOK secrets with MultiFernet: the first key encrypts, every key decrypts."""

from __future__ import annotations

from cryptography.fernet import Fernet, MultiFernet
from django.conf import settings


def credential_fernet() -> MultiFernet:
    if not settings.CREDENTIAL_KEYS:
        raise RuntimeError("TOKENWAY_CREDENTIAL_KEYS is empty")
    return MultiFernet([Fernet(key) for key in settings.CREDENTIAL_KEYS])


def encrypt_secret(secret: str) -> str:
    return credential_fernet().encrypt(secret.encode()).decode()


def decrypt_secret(token: str) -> str:
    return credential_fernet().decrypt(token.encode()).decode()


def reencrypt(token: str) -> str:
    """Re-encrypt with the newest key (MultiFernet.rotate)."""
    return credential_fernet().rotate(token.encode()).decode()
