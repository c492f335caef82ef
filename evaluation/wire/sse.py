"""Server-sent events from an aiohttp body: (event name, data string) per dispatched event."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp


async def sse_events(content: aiohttp.StreamReader) -> AsyncIterator[tuple[str, str]]:
    event, data = "", list[str]()
    async for raw in content:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if not line:
            if data:
                yield event, "\n".join(data)
            event, data = "", []
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
    if data:
        yield event, "\n".join(data)
