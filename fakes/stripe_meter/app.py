"""A Stripe-wire-compatible emulator of the meter-event endpoints (localstripe has none).

Endpoints, as Stripe serves them:
- ``POST /v1/billing/meter_events`` (form-encoded, secret key)
- ``POST /v2/billing/meter_event_session`` (JSON, secret key) -> authentication_token, expires_at
- ``POST /v2/billing/meter_event_stream`` (JSON ``{"events": [...]}``, Bearer session token)

Behaviour: identifier dedup over 24 h (a repeat is accepted and ignored), the
timestamp window (35 days back, 5 min ahead), a per-second rate limit (429),
session expiry (401 ``billing_meter_event_session_expired``), at most 100
events per stream request. Loopback control: ``GET /_emulator/totals``,
``GET /_emulator/identifiers``, ``POST /_emulator/config`` (rate limit, session
TTL, clock offset, failures to inject), ``POST /_emulator/reset``.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

DEDUP_WINDOW_S = 24 * 3600
PAST_WINDOW_S = 35 * 24 * 3600
FUTURE_WINDOW_S = 5 * 60
MAX_STREAM_EVENTS = 100


@dataclass
class Accepted:
    customer: str
    value: int
    timestamp: int
    accepted_at: float


@dataclass
class State:
    session_ttl_s: float = 15 * 60
    rate_limit_per_s: int = 1000  # stream requests per second (Stripe: 1,000 in test mode)
    clock_offset_s: float = 0.0
    fail_next: int = 0  # inject this many 500s
    sessions: dict[str, float] = field(default_factory=dict)  # token -> expires_at
    accepted: dict[tuple[str, str], Accepted] = field(default_factory=dict)  # (event_name, identifier)
    window: list[float] = field(default_factory=list)
    requests: int = 0
    duplicates: int = 0

    def now(self) -> float:
        return time.time() + self.clock_offset_s


STATE = web.AppKey("state", State)


def _error(status: int, code: str, message: str) -> web.Response:
    kind = "invalid_request_error" if status < 500 else "api_error"
    return web.json_response({"error": {"type": kind, "code": code, "message": message}}, status=status)


def _bearer(request: web.Request) -> str:
    header = request.headers.get("Authorization", "")
    return header[7:] if header.startswith("Bearer ") else ""


def _rate_limited(state: State) -> bool:
    now = time.monotonic() + state.clock_offset_s  # the emulator's clock: tests move it instead of sleeping
    state.window = [t for t in state.window if now - t < 1.0]
    if len(state.window) >= state.rate_limit_per_s:
        return True
    state.window.append(now)
    return False


def _accept(state: State, event: dict[str, Any]) -> str | None:
    """Validate and record one event; returns an error message or None."""
    name, identifier = event.get("event_name"), event.get("identifier") or secrets.token_hex(12)
    payload = event.get("payload") or {}
    customer, raw_value = payload.get("stripe_customer_id"), payload.get("value")
    if not name or not customer or raw_value is None:
        return "event_name, payload[stripe_customer_id] and payload[value] are required"
    try:
        value = int(str(raw_value))
        stamp = _timestamp(event.get("timestamp"), state)
    except ValueError as exc:
        return str(exc)
    now = state.now()
    if stamp < now - PAST_WINDOW_S or stamp > now + FUTURE_WINDOW_S:
        return "timestamp outside the allowed window (35 days back, 5 minutes ahead)"
    previous = state.accepted.get((name, identifier))
    if previous is not None and now - previous.accepted_at < DEDUP_WINDOW_S:
        state.duplicates += 1
        return None
    state.accepted[(name, identifier)] = Accepted(customer, value, int(stamp), now)
    return None


def _timestamp(raw: Any, state: State) -> float:
    if raw is None or raw == "":
        return state.now()
    if isinstance(raw, int | float) or str(raw).isdigit():
        return float(raw)
    from datetime import datetime

    try:
        return datetime.fromisoformat(str(raw).replace("Z", "+00:00")).timestamp()
    except ValueError as exc:
        raise ValueError(f"invalid timestamp {raw!r}") from exc


def _secret_key_ok(request: web.Request) -> bool:
    return _bearer(request).startswith(("sk_", "rk_"))


async def _nested_form(request: web.Request) -> dict[str, Any]:
    form = await request.post()
    data: dict[str, Any] = {}
    for key, value in form.items():
        if "[" in key:
            outer, inner = key.split("[", 1)
            data.setdefault(outer, {})[inner.rstrip("]")] = value
        else:
            data[key] = value
    return data


async def meter_events_v1(request: web.Request) -> web.Response:
    state = request.app[STATE]
    if not _secret_key_ok(request):
        return _error(401, "api_key_invalid", "Invalid API Key provided")
    event = await _nested_form(request)
    if error := _accept(state, event):
        return _error(400, "parameter_invalid", error)
    body = {"object": "billing.meter_event", "livemode": False, **event, "created": int(state.now())}
    return web.json_response(body)


async def session_create(request: web.Request) -> web.Response:
    state = request.app[STATE]
    if not _secret_key_ok(request):
        return _error(401, "api_key_invalid", "Invalid API Key provided")
    token = "mes_tok_" + secrets.token_urlsafe(24)
    created = state.now()
    state.sessions[token] = created + state.session_ttl_s
    return web.json_response(
        {
            "id": "mes_" + secrets.token_hex(12),
            "object": "v2.billing.meter_event_session",
            "authentication_token": token,
            "created": _iso(created),
            "expires_at": _iso(created + state.session_ttl_s),
            "livemode": False,
        }
    )


def _iso(epoch: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(epoch, tz=UTC).isoformat().replace("+00:00", "Z")


async def stream_create(request: web.Request) -> web.Response:
    state = request.app[STATE]
    state.requests += 1
    expires = state.sessions.get(_bearer(request))
    if expires is None:
        return _error(401, "authentication_failed", "Invalid meter event session token")
    if expires <= state.now():
        return _error(401, "billing_meter_event_session_expired", "The meter event session has expired")
    if _rate_limited(state):
        return _error(429, "rate_limit", "Too many requests")
    if state.fail_next > 0:
        state.fail_next -= 1
        return _error(500, "internal", "injected failure")
    body = await request.json()
    events = body.get("events") or []
    if not 1 <= len(events) <= MAX_STREAM_EVENTS:
        return _error(400, "invalid_events", f"between 1 and {MAX_STREAM_EVENTS} events per request")
    errors = [error for event in events if (error := _accept(state, event))]
    if errors:
        return _error(400, "invalid_event", errors[0])
    return web.json_response({}, status=202)


async def totals(request: web.Request) -> web.Response:
    """Accepted value per customer (optionally per event name and since an epoch): reconciliation's truth."""
    state = request.app[STATE]
    name = request.query.get("event_name")
    since = float(request.query.get("since", "0"))
    until = float(request.query.get("until", "inf"))
    per_customer: dict[str, int] = {}
    count = 0
    for (event_name, _identifier), acc in state.accepted.items():
        if (name and event_name != name) or not since <= acc.timestamp < until:
            continue
        per_customer[acc.customer] = per_customer.get(acc.customer, 0) + acc.value
        count += 1
    return web.json_response(
        {"customers": per_customer, "events": count, "duplicates": state.duplicates, "requests": state.requests}
    )


async def identifiers(request: web.Request) -> web.Response:
    state = request.app[STATE]
    rows = [
        {"event_name": n, "identifier": i, "value": a.value, "customer": a.customer, "accepted_at": a.accepted_at}
        for (n, i), a in state.accepted.items()
    ]
    return web.json_response({"data": rows})


async def configure(request: web.Request) -> web.Response:
    state = request.app[STATE]
    body = await request.json()
    for name in ("session_ttl_s", "rate_limit_per_s", "clock_offset_s", "fail_next"):
        if name in body:
            setattr(state, name, type(getattr(state, name))(body[name]))
    return web.json_response({"ok": True})


async def reset(request: web.Request) -> web.Response:
    request.app[STATE].__dict__.update(State().__dict__)
    return web.json_response({"ok": True})


def app_create() -> web.Application:
    app = web.Application()
    app[STATE] = State()
    app.router.add_post("/v1/billing/meter_events", meter_events_v1)
    app.router.add_post("/v2/billing/meter_event_session", session_create)
    app.router.add_post("/v2/billing/meter_event_stream", stream_create)
    app.router.add_get("/_emulator/totals", totals)
    app.router.add_get("/_emulator/identifiers", identifiers)
    app.router.add_post("/_emulator/config", configure)
    app.router.add_post("/_emulator/reset", reset)
    return app
