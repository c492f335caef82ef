"""Paths the gateway does not serve: OpenAI's other endpoints (legacy completions, moderations, images,
audio, files, batches, ...) are a 404 saying the endpoint is not served and which ones are, in the
caller's error shape; any other path is a plain 404 naming it."""

from __future__ import annotations

from routing.handlers.intake import new_request_id, send_error
from routing.http.asgi_io import Send
from routing.http.errors import GatewayError
from routing.wire.dialects import ANTHROPIC, OPENAI

SERVED = (
    "POST /v1/chat/completions, /v1/responses, /v1/messages, /v1/messages/count_tokens, /v1/embeddings; GET /v1/models"
)
# OpenAI API families a client may try (the first segment after /v1/), and what each is.
KNOWN = {
    "completions": "the legacy Completions API",
    "moderations": "moderations",
    "images": "image generation",
    "audio": "audio (speech, transcription, translation)",
    "files": "files",
    "uploads": "uploads",
    "batches": "batches",
    "fine_tuning": "fine-tuning",
    "assistants": "assistants",
    "threads": "threads",
    "vector_stores": "vector stores",
    "realtime": "the Realtime API",
    "videos": "video generation",
    "containers": "containers",
    "evals": "evals",
    "conversations": "conversations",
}
NOT_SERVED = "endpoint_not_served"


def refusal(method: str, path: str) -> GatewayError:
    family = path.removeprefix("/v1/").split("/", 1)[0] if path.startswith("/v1/") else ""
    if family in KNOWN:
        message = f"{method} {path} ({KNOWN[family]}) is not served by this gateway. Served: {SERVED}."
        return GatewayError(404, NOT_SERVED, message)
    return GatewayError(404, "not_found", f"No route for {method} {path}. Served: {SERVED}.")


async def refuse(method: str, path: str, send: Send) -> None:
    dialect = ANTHROPIC if path.startswith("/v1/messages") else OPENAI
    await send_error(send, dialect, refusal(method, path), new_request_id())
