"""What an upstream dialect adapter provides: the endpoint and the request headers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from contracts.snapshot import OfferingSnapshot


class Adapter(Protocol):
    dialect: str

    def url(self, offering: OfferingSnapshot) -> str: ...

    def headers(self, api_key: str, client: Mapping[str, str]) -> dict[str, str]: ...
