"""Loopback-only control endpoints under /_sim/ (health, requests, faults, incidents, profiles, reset)."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from aiohttp import web

from sim.faults import FaultRule
from sim.fleet import Fleet
from sim.profiles import Incident
from sim.views import fleet_view

LOOPBACK = ("127.0.0.1", "::1", None)
FLEET_KEY: web.AppKey[Fleet] = web.AppKey("fleet", Fleet)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(data), status=status, content_type="application/json")


def _bad(message: str) -> web.Response:
    return _json({"error": {"code": "invalid", "message": message}}, status=400)


@web.middleware
async def loopback_only(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.path.startswith("/_sim/") and request.path != "/_sim/health" and request.remote not in LOOPBACK:
        return _json({"error": {"code": "forbidden", "message": "control endpoints are loopback-only"}}, status=403)
    return await handler(request)


async def health(request: web.Request) -> web.Response:
    return _json({"status": "ok"})


async def requests(request: web.Request) -> web.Response:
    fleet = request.app[FLEET_KEY]
    try:
        limit = int(request.query.get("limit", "50"))
    except ValueError:
        return _bad("limit must be an integer")
    return _json({"requests": fleet.log.last(request.query.get("provider"), max(1, limit))})


async def _body(request: web.Request) -> dict[str, Any]:
    data = orjson.loads(await request.read() or b"{}")
    if not isinstance(data, dict):
        raise ValueError("body must be a JSON object")
    return data


def _rule(fleet: Fleet, data: dict[str, Any]) -> FaultRule:
    if "provider" not in data or "kind" not in data:
        raise ValueError("provider and kind are required")
    duration = data.get("duration_s")
    return FaultRule(
        provider=str(data["provider"]),
        kind=str(data["kind"]),
        model=data.get("model") or data.get("offering"),
        rate=float(data.get("rate", 1.0)),
        count=None if data.get("count") is None else int(data["count"]),
        until=None if duration is None else fleet.clock.now() + float(duration),
        stall_s=None if data.get("stall_s") is None else float(data["stall_s"]),
        factor=None if data.get("factor") is None else float(data["factor"]),
    )


async def add_fault(request: web.Request) -> web.Response:
    fleet = request.app[FLEET_KEY]
    try:
        rule = _rule(fleet, await _body(request))
        fleet.faults.add(rule)
    except (ValueError, TypeError, orjson.JSONDecodeError) as err:
        return _bad(str(err))
    return _json({"fault": _rule_view(rule)}, status=201)


def _rule_view(rule: FaultRule) -> dict[str, Any]:
    return {
        name: getattr(rule, name)
        for name in ("provider", "kind", "model", "rate", "count", "until", "stall_s", "factor")
    }


async def list_faults(request: web.Request) -> web.Response:
    return _json({"faults": [_rule_view(rule) for rule in request.app[FLEET_KEY].faults.rules]})


async def clear_faults(request: web.Request) -> web.Response:
    fleet = request.app[FLEET_KEY]
    provider = request.query.get("provider")
    fleet.faults.rules[:] = [rule for rule in fleet.faults.rules if provider is not None and rule.provider != provider]
    return _json({"faults": []})


async def add_incident(request: web.Request) -> web.Response:
    """An incident of the profiles' kind starting now: ``{"provider", "model"?, "kind"?, "duration_s",
    "ttft_factor"?, "tps_factor"?, "fault"?}`` (a slowdown or an outage that ends by itself)."""
    fleet = request.app[FLEET_KEY]
    try:
        data = await _body(request)
        incident = Incident(
            kind=str(data.get("kind", "degradation")),
            duration_s=float(data["duration_s"]),
            start_s=fleet.clock.now(),
            ttft_factor=float(data.get("ttft_factor", 1.0)),
            tps_factor=float(data.get("tps_factor", 1.0)),
            fault=str(data.get("fault", "http_503")),
        )
        if incident.kind not in ("degradation", "outage"):
            raise ValueError(f"unknown incident kind {incident.kind!r}")
        offerings = fleet.add_incident(str(data["provider"]), data.get("model"), incident)
    except (KeyError, ValueError, TypeError, orjson.JSONDecodeError) as err:
        return _bad(f"provider, model and incident fields: {err}")
    return _json({"incident": {**dataclasses.asdict(incident), "offerings": offerings}}, status=201)


async def clear_incidents(request: web.Request) -> web.Response:
    request.app[FLEET_KEY].clear_incidents(request.query.get("provider"))
    return _json({"incidents": []})


async def profiles(request: web.Request) -> web.Response:
    return _json(fleet_view(request.app[FLEET_KEY], request.query.get("provider")))


async def network(request: web.Request) -> web.Response:
    """The network matrix (sim/network.py): provider sites and each region's links to them."""
    return _json(request.app[FLEET_KEY].network.as_dict())


async def reset(request: web.Request) -> web.Response:
    request.app[FLEET_KEY].reset()
    return _json({"status": "reset"})


async def limits(request: web.Request) -> web.Response:
    """Override an offering's declared RPM/TPM (null lifts the limit) until the next reset."""
    fleet = request.app[FLEET_KEY]
    try:
        data = await _body(request)
        offering = fleet.providers[data["provider"]].offerings[data["model"]]
    except (KeyError, ValueError, orjson.JSONDecodeError) as err:
        return _bad(f"unknown provider/model or bad body: {err}")
    if "rpm" in data:
        offering.rpm = data["rpm"]
    if "tpm" in data:
        offering.tpm = data["tpm"]
    fleet.limiter.clear()
    return _json({"offering": offering.key, "rpm": offering.rpm, "tpm": offering.tpm})


async def clock(request: web.Request) -> web.Response:
    """Set the simulated hour of day (for daily drift and wall-clock incidents)."""
    fleet = request.app[FLEET_KEY]
    try:
        data = await _body(request)
        fleet.clock.set_hour(float(data["hour"]), float(data.get("tz_offset_h", 8.0)))
    except (KeyError, ValueError, TypeError, orjson.JSONDecodeError) as err:
        return _bad(f"hour is required: {err}")
    return _json({"wall": fleet.clock.wall()})


def add_routes(app: web.Application) -> None:
    app.router.add_get("/_sim/health", health)
    app.router.add_get("/_sim/requests", requests)
    app.router.add_get("/_sim/faults", list_faults)
    app.router.add_post("/_sim/faults", add_fault)
    app.router.add_delete("/_sim/faults", clear_faults)
    app.router.add_post("/_sim/incidents", add_incident)
    app.router.add_delete("/_sim/incidents", clear_incidents)
    app.router.add_get("/_sim/profiles", profiles)
    app.router.add_get("/_sim/network", network)
    app.router.add_post("/_sim/reset", reset)
    app.router.add_post("/_sim/limits", limits)
    app.router.add_post("/_sim/clock", clock)
