"""Forward a call along its route with failover before the first byte, then relay the answer."""

from __future__ import annotations

import time
from collections.abc import Callable

import aiohttp

from contracts.snapshot import OfferingSnapshot, OfferingStats
from routing.adapters.registry import adapter_for
from routing.asgi_io import Send
from routing.byok_connect import checked_url, make_byok_session, with_base_url
from routing.call import Call
from routing.capacity import STREAMS
from routing.config import GatewayConfig
from routing.credentials import Credentials
from routing.errors import GatewayError, UpstreamFailure
from routing.failover.deadline import first_byte_deadline_s
from routing.failover.health import HealthBoard
from routing.failover.upstream import Opened, open_attempt
from routing.prepare import forward_body
from routing.relay import relay_json, relay_stream

NON_STREAM_FLOOR_TPS = 25.0  # slowest output speed we wait for on a non-streaming answer


class Forwarder:
    def __init__(
        self, config: GatewayConfig, session: aiohttp.ClientSession, health: HealthBoard, credentials: Credentials,
        stats_for: Callable[[int], OfferingStats | None] = lambda _: None,
    ):  # fmt: skip
        self._config = config
        self._session = session
        self._byok_session: aiohttp.ClientSession | None = None  # tenants' own URLs (routing.byok_connect)
        self._health = health
        self._credentials = credentials
        self._stats_for = stats_for

    async def run(self, call: Call, offerings: list[OfferingSnapshot], send: Send) -> None:
        """Try offerings in order until one answers; raise the last failure as a GatewayError."""
        deadline = call.started_mono + self._config.deadline_s
        failure: UpstreamFailure | None = None
        for offering in offerings[: self._config.max_attempts]:
            if time.monotonic() >= deadline:
                break
            tenant_url = call.record.byok_base_urls.get(offering.provider)
            try:
                opened = await self._attempt(call, offering, deadline, tenant_url)
            except UpstreamFailure as exc:
                failure = exc
                if not exc.retryable:
                    break
                if tenant_url:  # the tenant's own endpoint failed: not a signal about the shared offering
                    continue
                if exc.kind == "pool_wait":  # our own per-host limit: says nothing about the provider
                    self._health.not_reached(offering.offering_id)
                    continue
                self._health.failure(
                    offering.offering_id,
                    retry_after=exc.retry_after if exc.kind.startswith("http_") else None,
                    throttled=exc.kind == "http_429",
                )
                continue
            if not tenant_url:
                self._health.success(offering.offering_id, opened.ttfb_ms)
            await self._relay(call, offering, opened, send, deadline)
            return
        raise _final_error(failure)

    async def _attempt(self, call: Call, offering: OfferingSnapshot, deadline: float, tenant_url: str | None) -> Opened:
        call.attempts += 1
        if call.attempts > 1 and "+failover" not in call.route_reason:
            call.route_reason += "+failover"
        adapter = adapter_for(offering.dialect)
        api_key, _ = self._credentials.for_offering(call.record, offering)
        body = forward_body(call.dialect.name, call.body, offering)
        session, reached = self._session, offering
        if tenant_url:
            allow_loopback = self._config.allow_loopback_provider_urls
            session = self._tenant_session()
            reached = with_base_url(offering, checked_url(tenant_url, allow_loopback=allow_loopback))
        else:
            self._health.begin(offering.offering_id)
        return await open_attempt(
            session, adapter.url(reached), adapter.headers(api_key, call.headers), body,
            stream=call.view.stream, first_byte_s=self._first_byte_s(call, offering), deadline=deadline,
        )  # fmt: skip

    def _tenant_session(self) -> aiohttp.ClientSession:
        if self._byok_session is None:
            self._byok_session = make_byok_session(
                connect_timeout_s=self._config.connect_timeout_s,
                allow_loopback=self._config.allow_loopback_provider_urls,
            )
        return self._byok_session

    async def close(self) -> None:
        if self._byok_session is not None:
            await self._byok_session.close()

    def _first_byte_s(self, call: Call, offering: OfferingSnapshot) -> float:
        """Streams: the offering's first-byte deadline (from its measured TTFT). Whole answers: that
        plus the time to generate the allowed output at a floor speed, so a stalled provider is left
        while fallbacks have time."""
        first = first_byte_deadline_s(
            self._stats_for(offering.offering_id),
            input_tokens=call.view.input_estimate,
            cap_s=self._config.first_token_timeout_s,
        )
        if call.view.stream:
            return first
        return first + (call.view.max_tokens or offering.max_output) / NON_STREAM_FLOOR_TPS

    async def _relay(self, call: Call, offering: OfferingSnapshot, opened: Opened, send: Send, deadline: float) -> None:
        call.offering = offering
        call.byok = bool(call.record.byok.get(offering.provider))
        call.ttft_ms = (time.monotonic() - call.started_mono) * 1000
        if call.view.stream:
            STREAMS.open += 1
            try:
                await relay_stream(call, opened, send, idle_s=self._config.idle_timeout_s, deadline=deadline)
            finally:
                STREAMS.open -= 1
        else:
            await relay_json(call, opened, send)


def _final_error(failure: UpstreamFailure | None) -> GatewayError:
    if failure is None:
        return GatewayError(504, "upstream_timeout", "No provider answered before the deadline.")
    if not failure.retryable and failure.upstream_status is not None and failure.upstream_status < 500:
        return GatewayError(failure.upstream_status, "upstream_rejected", failure.message)
    return failure.to_gateway_error()
