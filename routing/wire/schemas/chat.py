"""``POST /v1/chat/completions``: what the gateway reads, routes on or translates for Anthropic-dialect
offerings (routing/translate/request_o2a.py)."""

from __future__ import annotations

from routing.wire.schema import Arr, Bool, Either, Int, Num, Obj, Str, Tagged
from routing.wire.schemas.common import MODEL, PROVIDER, TOKEN_COUNT

TOOL_CHOICES = ("none", "auto", "required")

_CACHE_CONTROL = Obj({"type": Str()})  # OpenRouter-style breakpoint on a part, kept for Anthropic
PART = Tagged(
    "type",
    {
        "text": Obj({"text": Str(), "cache_control": _CACHE_CONTROL}, required=("text",)),
        "image_url": Obj(
            {"image_url": Obj({"url": Str(), "detail": Str(enum=("auto", "low", "high"))}, required=("url",))},
            required=("image_url",),
        ),
    },
    name="ChatCompletionsContentPart",
)
_FUNCTION_CALL = Obj({"name": Str(), "arguments": Either(Str(), Obj({}))}, required=("name",))
TOOL_CALL = Obj({"id": Str(), "type": Str(), "function": _FUNCTION_CALL}, required=("function",))
_CONTENT = Either(Str(), Arr(PART))
_SAYS = Obj({"content": _CONTENT, "name": Str()}, required=("content",))
MESSAGE = Tagged(
    "role",
    {
        "system": _SAYS,
        "developer": _SAYS,
        "user": _SAYS,
        "assistant": Obj({"content": _CONTENT, "name": Str(), "refusal": Str(), "tool_calls": Arr(TOOL_CALL)}),
        "tool": Obj({"content": _CONTENT, "tool_call_id": Str()}, required=("content", "tool_call_id")),
        "function": Obj({"content": Str(), "name": Str()}, required=("name",)),
    },
    closed=True,
    name="ChatCompletionsMessage",
)
_FUNCTION = Obj(
    {"name": Str(nonblank=True), "description": Str(), "parameters": Obj({}), "strict": Bool()}, required=("name",)
)
TOOL = Tagged("type", {"function": Obj({"function": _FUNCTION}, required=("function",))}, name="ChatCompletionsTool")
TOOL_CHOICE = Either(
    Str(enum=TOOL_CHOICES),
    Obj({"type": Str(), "function": Obj({"name": Str()}, required=("name",))}, required=("type",)),
)

CHAT_REQUEST = Obj(
    {
        "model": MODEL,
        "messages": Arr(MESSAGE, min_items=1),
        "stream": Bool(),
        "stream_options": Obj({"include_usage": Bool()}),
        "max_tokens": TOKEN_COUNT,
        "max_completion_tokens": TOKEN_COUNT,
        "n": Int(1, 128),
        "temperature": Num(0, 2),
        "top_p": Num(0, 1),
        "stop": Either(Str(), Arr(Str())),
        "tools": Arr(TOOL),
        "tool_choice": TOOL_CHOICE,
        "parallel_tool_calls": Bool(),
        "response_format": Obj({"type": Str()}, required=("type",)),
        "user": Str(),
        "provider": PROVIDER,
    },
    required=("model", "messages"),
    name="ChatCompletionsRequest",
)
