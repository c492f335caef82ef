"""``POST /v1/messages`` and ``/v1/messages/count_tokens``: what the gateway reads, estimates, cleans for
prompt caches or translates for OpenAI-dialect offerings (routing/translate/request_a2o.py)."""

from __future__ import annotations

from routing.wire.schema import Arr, Bool, Either, Int, Num, Obj, Str, Tagged
from routing.wire.schemas.common import MAX_COUNT, MODEL, PROVIDER, TOKEN_COUNT

ROLES = ("user", "assistant", "system")  # agents put system turns inside messages too
TOOL_CHOICES = ("auto", "any", "tool", "none")

_CACHE_CONTROL = Obj({"type": Str(), "ttl": Str()})
TEXT = Obj({"text": Str(), "cache_control": _CACHE_CONTROL}, required=("text",))
_SOURCE = Tagged(
    "type",
    {
        "base64": Obj({"media_type": Str(), "data": Str()}, required=("data",)),
        "url": Obj({"url": Str()}, required=("url",)),
    },
)
IMAGE = Obj({"source": _SOURCE, "cache_control": _CACHE_CONTROL}, required=("source",))
_RESULT_PART = Tagged("type", {"text": TEXT, "image": IMAGE})
BLOCK = Tagged(
    "type",
    {
        "text": TEXT,
        "image": IMAGE,
        "tool_use": Obj({"id": Str(), "name": Str(nonblank=True), "input": Obj({})}, required=("id", "name")),
        "tool_result": Obj(
            {"tool_use_id": Str(), "content": Either(Str(), Arr(_RESULT_PART)), "is_error": Bool()},
            required=("tool_use_id",),
        ),
    },
    name="MessagesContentBlock",
)
MESSAGE = Obj(
    {"role": Str(enum=ROLES), "content": Either(Str(), Arr(BLOCK))},
    required=("role", "content"),
    name="MessagesMessage",
)
SYSTEM = Either(Str(), Arr(Tagged("type", {"text": TEXT}, closed=True)))
_INPUT_SCHEMA = Obj({"type": Str(enum=("object",))}, required=("type",))  # a JSON Schema of an object
TOOL = Tagged(
    "type",
    {"custom": Obj({"name": Str(nonblank=True), "description": Str(), "input_schema": _INPUT_SCHEMA},
                   required=("name", "input_schema"))},
    default="custom",
    name="MessagesTool",
)  # fmt: skip
TOOL_CHOICE = Tagged(
    "type",
    {
        "auto": Obj({"disable_parallel_tool_use": Bool()}),
        "any": Obj({"disable_parallel_tool_use": Bool()}),
        "none": Obj({}),
        "tool": Obj({"name": Str(nonblank=True), "disable_parallel_tool_use": Bool()}, required=("name",)),
    },
    closed=True,
)
THINKING = Tagged("type", {"enabled": Obj({"budget_tokens": TOKEN_COUNT}, required=("budget_tokens",))})

_FIELDS = {
    "model": MODEL,
    "messages": Arr(MESSAGE, min_items=1),
    "system": SYSTEM,
    "max_tokens": TOKEN_COUNT,
    "stream": Bool(),
    "temperature": Num(0, 1),
    "top_p": Num(0, 1),
    "top_k": Int(0, MAX_COUNT),
    "stop_sequences": Arr(Str()),
    "tools": Arr(TOOL),
    "tool_choice": TOOL_CHOICE,
    "thinking": THINKING,
    "metadata": Obj({"user_id": Str()}),
    "provider": PROVIDER,
}
MESSAGES_REQUEST = Obj(_FIELDS, required=("model", "max_tokens", "messages"), name="MessagesRequest")
COUNT_TOKENS_REQUEST = Obj(_FIELDS, required=("model", "messages"), name="CountTokensRequest")
