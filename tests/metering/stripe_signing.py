"""Signed Stripe webhook deliveries for tests (the same HMAC scheme Stripe uses)."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any

SECRET = "whsec_test_lifecycle"
URL = "/api/v1/stripe/webhook"


def signed(payload: bytes, *, at: int | None = None, secret: str = SECRET) -> str:
    at = int(time.time()) if at is None else at
    digest = hmac.new(secret.encode(), f"{at}.".encode() + payload, hashlib.sha256).hexdigest()
    return f"t={at},v1={digest}"


def event(event_id: str, kind: str, obj: dict[str, Any]) -> bytes:
    body = {"id": event_id, "object": "event", "type": kind, "created": int(time.time()), "data": {"object": obj}}
    return json.dumps(body).encode()


def deliver(client: Any, event_id: str, kind: str, obj: dict[str, Any], *, at: int | None = None) -> Any:
    payload = event(event_id, kind, obj)
    return client.post(URL, data=payload, content_type="application/json", HTTP_STRIPE_SIGNATURE=signed(payload, at=at))
