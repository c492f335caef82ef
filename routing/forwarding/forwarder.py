"""Forward a call along its route with failover before the first byte, then relay the answer."""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Awaitable, Callable
from functools import partial

import aiohttp

from contracts.snapshot import OfferingSnapshot, OfferingStats
from routing.adapters.registry import adapter_for
from routing.failover.deadline import first_byte_deadline_s, trial_first_byte_deadline_s
from routing.failover.health import HealthBoard
from routing.forwarding.attempt_span import attempt as traced_attempt
from routing.forwarding.credentials import Credentials
from routing.forwarding.prepare import Unsupported, forward_body, unsupported
from routing.handoff.call import Call
from routing.hedging.policy import Hedging, tracked
from routing.hedging.race import HedgedRace, Outcome
from routing.http.asgi_io import Send
from routing.http.errors import GatewayError, UpstreamFailure
from routing.limits.board import LimitBoard
from routing.process.capacity import STREAMS
from routing.process.config import GatewayConfig
from routing.relay.answer import relay_json, relay_stream
from routing.telemetry import metrics
from routing.translate.upstream_errors import provider_error
from routing.upstream.attempt import Opened, open_attempt
from routing.upstream.byok_connect import checked_url, make_byok_session, with_base_url
from routing.upstream.classify import rate_limited

NON_STREAM_FLOOR_TPS = 25.0  # slowest output speed we wait for on a non-streaming answer


class Forwarder:
    def __init__(
        self, config: GatewayConfig, session: aiohttp.ClientSession, health: HealthBoard, credentials: Credentials,
        stats_for: Callable[[int], OfferingStats | None] = lambda _: None,
        limits: LimitBoard | None = None, hedging: Hedging | None = None,
    ):  # fmt: skip
        self._config = config
        self._session = session
        self._byok_session: aiohttp.ClientSession | None = None  # tenants' own URLs (routing.upstream.byok_connect)
        self._health = health
        self._credentials = credentials
        self._stats_for = stats_for
        self._limits = limits  # learned rate limits: every attempt's send, headers, 429 (routing.limits.board)
        self._hedging = hedging

    async def run(self, call: Call, offerings: list[OfferingSnapshot], send: Send) -> None:
        """Try offerings in order until one answers (a late first byte may be hedged with the next,
        routing.hedging.race); raise the last failure as a GatewayError."""
        deadline = call.started_mono + self._config.deadline_s
        outcome = await self._race(call, offerings, deadline)
        try:
            for loser in outcome.losers:
                self._health.not_reached(loser.offering_id)  # cut short by us: no signal about it
            if outcome.offering is None or outcome.opened is None:
                raise _final_error(outcome.failure, outcome.failures)
            call.release_body()
            outcome.opened.drop_headers()
            if not call.record.byok_base_urls.get(outcome.offering.provider):
                self._health.success(outcome.offering.offering_id, outcome.opened.ttfb_ms)
            relaying = self._relay(call, outcome.offering, outcome.opened, send, deadline)
            streaming = int(call.view.stream)  # open streams, for /healthz and /metrics
            if streaming:  # runs once the relay waits for the next chunk: the first is out by then
                asyncio.get_running_loop().call_soon(call.explain_now, context=contextvars.copy_context())
            STREAMS.open += streaming
            try:
                await relaying
            finally:
                STREAMS.open -= streaming
        finally:
            if outcome.losers and self._hedging is not None:
                await self._hedging.book(call, outcome.losers)

    async def _race(self, call: Call, offerings: list[OfferingSnapshot], deadline: float) -> Outcome:
        """The attempts up to a first byte. The race and its callbacks end with it: a frame that kept
        them through the relay would hold them (≈ 1 KB) for every open stream."""
        tried = offerings[: self._config.max_attempts]
        race = HedgedRace(
            partial(self._tracked, call, deadline, tried[-1] if tried else None), failed=partial(self._failed, call),
            hedge_after=partial(self._hedge_after, call), may_hedge=partial(self._may_hedge, call), deadline=deadline,
        )  # fmt: skip
        return await race.run(tried)

    def _failed(self, call: Call, offering: OfferingSnapshot, exc: UpstreamFailure) -> bool:
        """Book one attempt's failure; True when another offering may be tried."""
        metrics.UPSTREAM_FAILURES.labels(offering.provider, exc.kind).inc()
        if not exc.retryable:
            return False
        if call.record.byok_base_urls.get(offering.provider):
            return True  # the tenant's own endpoint failed: not a signal about the shared offering
        if exc.kind in ("limit_room", "unsupported"):  # not sent (routing.hedging.policy.tracked): nothing to book
            return True
        if exc.kind == "pool_wait":  # our own per-host limit: says nothing about the provider
            self._health.not_reached(offering.offering_id)
            return True
        self._health.failure(
            offering.offering_id,
            retry_after=exc.retry_after if exc.kind.startswith("http_") else None,
            throttled=exc.kind == "http_429",
        )
        return True

    def _tracked(
        self, call: Call, deadline: float, last: OfferingSnapshot | None, offering: OfferingSnapshot
    ) -> Awaitable[Opened]:
        refusal = unsupported(call.dialect.name, call.body, offering)
        if refusal is not None:  # never sent: no rate-limit ticket, no trace span, no health signal
            return _raise(refusal)
        tenant_url = call.record.byok_base_urls.get(offering.provider)
        attempt = self._attempt(call, offering, deadline, tenant_url)
        opening = tracked(self._limits, call, offering, attempt, fallback=offering is not last)
        return traced_attempt(call, offering, opening)  # as it is while traces are off (attempt_span)

    def _hedge_after(self, call: Call, offering: OfferingSnapshot) -> float | None:
        if self._hedging is None:
            return None
        live_ms = self._health.live(offering.offering_id).latency_ms
        return self._hedging.after_s(call, self._stats_for(offering.offering_id), live_ms)

    async def _may_hedge(self, call: Call) -> bool:
        return self._hedging is not None and await self._hedging.may_hedge(call)

    async def _attempt(self, call: Call, offering: OfferingSnapshot, deadline: float, tenant_url: str | None) -> Opened:
        call.attempts += 1
        if call.attempts > 1 and "+failover" not in call.route_reason and not call.route_reason.endswith("+hedge"):
            call.route_reason += "+failover"
        adapter = adapter_for(offering.dialect)
        api_key, _ = self._credentials.for_offering(call.record, offering)
        body = forward_body(call.dialect.name, call.body, offering)
        session, reached, trial = self._session, offering, False
        if tenant_url:
            allow_loopback, ports = self._config.allow_loopback_provider_urls, self._config.byok_allowed_ports
            session = self._tenant_session()
            reached = with_base_url(
                offering, checked_url(tenant_url, allow_loopback=allow_loopback, allowed_ports=ports)
            )
        else:
            trial = self._health.begin(offering.offering_id)
        path = call.dialect.upstream_path  # an endpoint of the same dialect beside chat (embeddings)
        url = reached.base_url.rstrip("/") + path if path else adapter.url(reached)
        return await open_attempt(
            session, url, adapter.headers(api_key, call.headers), body,
            stream=call.view.stream, first_byte_s=self._first_byte_s(call, offering, trial), deadline=deadline,
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

    def _first_byte_s(self, call: Call, offering: OfferingSnapshot, trial: bool) -> float:
        """Streams: the offering's first-byte deadline (from its measured TTFT; a half-open breaker's trial
        gets a shorter one). Whole answers: that plus the time to generate the allowed output at a floor
        speed, so a stalled provider is left while fallbacks have time."""
        first = (trial_first_byte_deadline_s if trial else first_byte_deadline_s)(
            self._stats_for(offering.offering_id),
            input_tokens=call.view.input_estimate,
            cap_s=self._config.first_token_timeout_s,
        )
        if call.view.stream:
            return first
        return first + (call.view.max_tokens or offering.max_output) / NON_STREAM_FLOOR_TPS

    def _relay(
        self, call: Call, offering: OfferingSnapshot, opened: Opened, send: Send, deadline: float
    ) -> Awaitable[None]:
        """The answered call's state, and the relay itself to await: no frame of ours around it for the
        life of a stream."""
        call.offering = offering
        call.byok = bool(call.record.byok.get(offering.provider))
        call.ttft_ms = (time.monotonic() - call.started_mono) * 1000
        metrics.observe_ttft(offering.provider, call.ttft_ms / 1000)
        if call.view.stream:
            return relay_stream(call, opened, send, idle_s=self._config.idle_timeout_s, deadline=deadline)
        return relay_json(call, opened, send)


async def _raise(failure: UpstreamFailure) -> Opened:
    raise failure


def _final_error(failure: UpstreamFailure | None, failures: list[UpstreamFailure]) -> GatewayError:
    throttled = rate_limited(failures)
    if throttled is not None:
        return throttled
    tried = [f for f in failures if not isinstance(f, Unsupported)]
    if isinstance(failure, Unsupported) and not tried:  # no offering could honour the request as sent
        return GatewayError(400, "unsupported_parameter", failure.message, param=failure.param)
    failure = tried[-1] if isinstance(failure, Unsupported) else failure
    if failure is None:
        return GatewayError(504, "upstream_timeout", "No provider answered before the deadline.")
    if not failure.retryable and failure.upstream_status is not None and failure.upstream_status < 500:
        return _rejected(failure)
    return failure.to_gateway_error()


def _rejected(failure: UpstreamFailure) -> GatewayError:
    """The provider's own 4xx: its message and field, not its JSON body inside our message."""
    assert failure.upstream_status is not None
    said = provider_error(failure.upstream_body)
    if said is None:
        return GatewayError(failure.upstream_status, "upstream_rejected", failure.message)
    message, param = said
    return GatewayError(
        failure.upstream_status, "upstream_rejected", f"The provider rejected the request: {message}", param=param
    )
