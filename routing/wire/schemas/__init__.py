"""The request schema of each caller dialect, declared once (routing/wire/schema.py): the gateway checks
bodies against them and docs/gateway-openapi.yaml renders them (routing/wire/openapi.py)."""

from __future__ import annotations

from routing.wire.fast_check import Checker
from routing.wire.schema import Obj
from routing.wire.schemas.chat import CHAT_REQUEST
from routing.wire.schemas.embeddings import EMBEDDINGS_REQUEST
from routing.wire.schemas.messages import COUNT_TOKENS_REQUEST, MESSAGES_REQUEST
from routing.wire.schemas.responses import RESPONSES_REQUEST

# path -> the request body it accepts
BY_PATH: dict[str, Obj] = {
    "/v1/chat/completions": CHAT_REQUEST,
    "/v1/messages": MESSAGES_REQUEST,
    "/v1/messages/count_tokens": COUNT_TOKENS_REQUEST,
    "/v1/responses": RESPONSES_REQUEST,
    "/v1/embeddings": EMBEDDINGS_REQUEST,
}

CHAT = Checker(CHAT_REQUEST)
MESSAGES = Checker(MESSAGES_REQUEST)
COUNT_TOKENS = Checker(COUNT_TOKENS_REQUEST)
RESPONSES = Checker(RESPONSES_REQUEST)
CHECKERS = {"/v1/chat/completions": CHAT, "/v1/messages": MESSAGES, "/v1/messages/count_tokens": COUNT_TOKENS,
            "/v1/responses": RESPONSES}  # fmt: skip
EMBEDDINGS = Checker(EMBEDDINGS_REQUEST)
CHECKERS["/v1/embeddings"] = EMBEDDINGS

__all__ = [
    "BY_PATH",
    "CHAT_REQUEST",
    "CHECKERS",
    "COUNT_TOKENS_REQUEST",
    "EMBEDDINGS_REQUEST",
    "MESSAGES_REQUEST",
    "RESPONSES_REQUEST",
]
