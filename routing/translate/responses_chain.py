"""Anthropic events -> Responses events, through the chat-completions chunks the gateway already
makes of them: one translation per pair of formats, not one per caller-upstream combination."""

from __future__ import annotations

from routing.http.errors import GatewayError
from routing.http.sse import SseEvent, SseSplitter
from routing.translate.responses_stream import ChatToResponses
from routing.translate.stream_anthropic import AnthropicToOpenAI

MID_ANSWER = GatewayError(502, "upstream_error", "The provider failed mid-answer.")


class AnthropicToResponses:
    def __init__(self, first: AnthropicToOpenAI, second: ChatToResponses) -> None:
        self._first, self._second = first, second
        self._splitter = SseSplitter()
        self.tracker = first.tracker  # the first stage reads the upstream's usage and text
        self.done = False
        self.upstream_error = False

    def _relay(self, chunks: bytes) -> bytes:
        out = b"".join(self._second.feed(event) for event in self._splitter.feed(chunks))
        if self._first.upstream_error and not self._second.done:
            out += self._second.fail(MID_ANSWER)
        self.done = self._second.done
        self.upstream_error = self._first.upstream_error or self._second.upstream_error
        return out

    def feed(self, event: SseEvent) -> bytes:
        return self._relay(self._first.feed(event))

    def finish(self) -> bytes:
        return self._relay(self._first.finish()) + self._second.finish()

    def fail(self, error: GatewayError) -> bytes:
        self.done = True
        return self._second.fail(error)
