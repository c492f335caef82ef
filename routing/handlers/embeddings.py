"""``POST /v1/embeddings``: the chat-completions flow (key, admission and hold, route among the model's
embedding offerings, failover before the first byte, usage to the ledger) with the embeddings dialect
(routing/wire/embeddings.py): input tokens only, never streamed."""

from __future__ import annotations

from collections.abc import Awaitable

from routing.gateway import Gateway
from routing.handlers import completions
from routing.http.asgi_io import Receive, Scope, Send
from routing.wire.embeddings import EMBEDDINGS, PATH

__all__ = ["PATH", "serve"]


def serve(gateway: Gateway, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
    return completions.serve(gateway, EMBEDDINGS, scope, receive, send)
