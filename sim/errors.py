"""Errors the fleet answers with, in a dialect-neutral form; error_styles renders them."""

from __future__ import annotations

from dataclasses import dataclass, field

# Generic kinds, mapped to each provider's own type/code strings by sim.dialects.error_styles.
INVALID = "invalid_request"
AUTH = "authentication"
NOT_FOUND = "not_found"
CONTEXT = "context_length"
RATE_LIMIT = "rate_limit"
SERVER = "server_error"
BAD_GATEWAY = "bad_gateway"
UNAVAILABLE = "unavailable"
OVERLOADED = "overloaded"

STATUS = {
    INVALID: 400,
    AUTH: 401,
    NOT_FOUND: 404,
    CONTEXT: 400,
    RATE_LIMIT: 429,
    SERVER: 500,
    BAD_GATEWAY: 502,
    UNAVAILABLE: 503,
    OVERLOADED: 529,
}


@dataclass(slots=True)
class SimError(Exception):
    kind: str
    message: str
    param: str | None = None
    code: str | None = None  # OpenAI-style machine code when the real provider sends one
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.status:
            self.status = STATUS[self.kind]

    def __str__(self) -> str:
        return f"{self.status} {self.kind}: {self.message}"
