"""The ``model`` a caller sees is the catalog model it was served by, not the provider's name for it.

Translated answers are built with the catalog model already; pass-through answers carry the
provider's ``model`` (``deepseek-chat``, ``claude-sonnet-4-5-20250929``), rewritten here.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from routing.http.sse import SseEvent
from routing.translate.stream_base import StreamConverter
from routing.usage.tracker import UsageTracker

# A top-level-looking "model" member. Inside a JSON string its quotes are escaped (\"model\"),
# so text, tool arguments and thinking never match.
_FIELD_RE = re.compile(rb'"model"\s*:\s*"(?:[^"\\]|\\.)*"')


def rename_json(body: dict[str, Any], model: str) -> dict[str, Any]:
    if "model" in body:
        body["model"] = model
    return body


def rename_bytes(raw: bytes, field: bytes) -> bytes:
    """First ``"model": "..."`` member of ``raw`` replaced by ``field``; ``raw`` itself when absent."""
    if raw.find(b'"model"') == -1:
        return raw
    return _FIELD_RE.sub(lambda _: field, raw, count=1)


class Renamed:
    """A pass-through stream converter whose events name the catalog model."""

    def __init__(self, inner: StreamConverter, model: str) -> None:
        self.inner = inner
        self.tracker: UsageTracker = inner.tracker
        self.done = False
        self.upstream_error = False
        self._field = b'"model":' + orjson.dumps(model)
        self._seen = b"\0"  # the provider's exact member, once seen: later chunks repeat it byte for byte

    def feed(self, event: SseEvent) -> bytes:
        inner = self.inner
        out = inner.feed(event)
        renamed = out.replace(self._seen, self._field, 1)  # ``out`` itself when the member is not in it
        if renamed is out and out.find(b'"model"') != -1 and (found := _FIELD_RE.search(out)) is not None:
            self._seen = found.group(0)
            renamed = out[: found.start()] + self._field + out[found.end() :]
        self.done, self.upstream_error = inner.done, inner.upstream_error
        return renamed

    def finish(self) -> bytes:
        return self.inner.finish()
