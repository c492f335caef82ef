"""One attempt at one offering, up to its first byte: the point after which nothing is retried."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import aiohttp
from multidict import CIMultiDict, CIMultiDictProxy

from routing.http.errors import UpstreamFailure
from routing.upstream.classify import from_exception, from_status

_NO_HEADERS: CIMultiDictProxy[str] = CIMultiDictProxy(CIMultiDict())

# Errors of one attempt that send us to the next offering (anything else is a bug and propagates).
ATTEMPT_ERRORS = (aiohttp.ClientError, TimeoutError, OSError, asyncio.IncompleteReadError)


@dataclass(slots=True)
class Opened:
    response: aiohttp.ClientResponse
    first: bytes  # first body bytes of a stream, or the whole body otherwise
    ttfb_ms: float

    def drop_headers(self) -> None:
        """The offering answered and its headers were read (status, learned limits): the relay needs only
        the body, so the parsed upstream headers and the sent request's headers (our provider key among
        them) are let go instead of living as long as the stream (≈ 3 KB with six upstream headers)."""
        response = self.response
        response._headers = _NO_HEADERS
        response._raw_headers = ()
        response._cache.clear()  # ``response.headers`` is cached here once read
        info = response._request_info
        response._request_info = aiohttp.RequestInfo(info.url, info.method, _NO_HEADERS, info.real_url)


async def open_attempt(
    session: aiohttp.ClientSession, url: str, headers: dict[str, str], body: bytes, *,
    stream: bool, first_byte_s: float, deadline: float,
) -> Opened:  # fmt: skip
    """POST and wait for the first bytes (stream) or the whole answer, within ``first_byte_s``."""
    started = time.monotonic()
    budget = max(0.0, deadline - started)
    response: aiohttp.ClientResponse | None = None
    try:
        async with asyncio.timeout(min(first_byte_s, budget)):
            response = await session.post(url, data=body, headers=headers, allow_redirects=False)
            if response.status != 200:
                raise from_status(response.status, response.headers, await response.read())
            first = await (response.content.readany() if stream else response.read())
    except ATTEMPT_ERRORS as exc:
        if response is not None:
            response.close()
        raise from_exception(exc) from exc
    except UpstreamFailure:
        if response is not None:
            response.release()
        raise
    except asyncio.CancelledError:
        if response is not None:
            response.close()
        raise
    if stream and not first:
        response.close()
        raise UpstreamFailure(
            502, "protocol", "The provider closed the stream before sending anything.", retryable=True
        )
    return Opened(response, first, (time.monotonic() - started) * 1000)
