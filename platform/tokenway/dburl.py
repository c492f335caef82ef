"""Parse ``DATABASE_URL`` into Django's DATABASES entry (psycopg 3)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit


def database_from_url(url: str) -> dict[str, Any]:
    """``postgresql://user:pass@host:port/name?host=/socket/dir`` -> Django dict."""
    parts = urlsplit(url)
    if parts.scheme not in {"postgres", "postgresql", "pgsql"}:
        raise ValueError(f"DATABASE_URL must be a postgresql:// URL, got scheme {parts.scheme!r}")
    query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    host = unquote(parts.hostname or "") or query.pop("host", "")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parts.path.lstrip("/")) or "postgres",
        "USER": unquote(parts.username or "") or "postgres",
        "PASSWORD": unquote(parts.password or ""),
        "HOST": host,
        "PORT": str(parts.port or ""),
        "CONN_MAX_AGE": 0,
        "OPTIONS": query,
    }
