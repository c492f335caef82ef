"""Provider credentials: the platform's keys from the environment, tenants' BYOK keys (Fernet)."""

from __future__ import annotations

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from contracts.env import env_str
from contracts.keyrecord import KeyRecord
from contracts.snapshot import OfferingSnapshot
from routing.http.errors import GatewayError

MAX_CACHED = 10_000


class Credentials:
    def __init__(self, credential_keys: tuple[str, ...], placeholder: str) -> None:
        self._fernet = MultiFernet([Fernet(k.encode()) for k in credential_keys]) if credential_keys else None
        self._placeholder = placeholder
        self._decrypted: dict[str, str] = {}

    def for_offering(self, record: KeyRecord, offering: OfferingSnapshot) -> tuple[str, bool]:
        """(api key, byok): the tenant's own key for the provider when it has one."""
        token = record.byok.get(offering.provider)
        if token:
            return self._decrypt(token), True
        env_name = offering.api_key_env
        return (env_str(env_name) if env_name else "") or self._placeholder, False

    def _decrypt(self, token: str) -> str:
        cached = self._decrypted.get(token)
        if cached is not None:
            return cached
        if self._fernet is None:
            raise GatewayError(500, "byok_unavailable", "BYOK credentials cannot be decrypted on this gateway.")
        try:
            value = self._fernet.decrypt(token.encode()).decode()
        except InvalidToken as exc:
            raise GatewayError(500, "byok_invalid", "The stored provider credential could not be decrypted.") from exc
        if len(self._decrypted) >= MAX_CACHED:
            self._decrypted.clear()
        self._decrypted[token] = value
        return value
