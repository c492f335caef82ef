"""``POST /v1/responses``: what the gateway reads, translates to chat completions
(routing/translate/responses_*.py) or echoes back in the Response object."""

from __future__ import annotations

from routing.wire.schema import Arr, Bool, Either, Num, Obj, Str, Tagged
from routing.wire.schemas.common import MODEL, PROVIDER, TOKEN_COUNT

ROLES = ("user", "assistant", "system", "developer")
TOOL_CHOICES = ("none", "auto", "required")

_TEXT = Obj({"text": Str()}, required=("text",))
PART = Tagged(
    "type",
    {
        "input_text": _TEXT,
        "output_text": _TEXT,
        "summary_text": _TEXT,
        "text": _TEXT,
        "refusal": Obj({"refusal": Str()}, required=("refusal",)),
        "input_image": Obj({"image_url": Str(), "file_id": Str(), "detail": Str(enum=("low", "high", "auto"))}),
    },
    name="ResponsesContentPart",
)
_NAME = Str(nonblank=True)
FUNCTION = Obj({"name": _NAME, "description": Str(), "parameters": Obj({}), "strict": Bool()}, required=("name",))
CUSTOM = Obj(
    {
        "name": _NAME,
        "description": Str(),
        "format": Tagged("type", {"grammar": Obj({"syntax": Str(), "definition": Str()}), "text": Obj({})}),
    },
    required=("name",),
)
NAMESPACE = Obj({"name": _NAME, "description": Str()}, required=("name", "tools"))
TOOL = Tagged("type", {"function": FUNCTION, "custom": CUSTOM, "namespace": NAMESPACE}, name="ResponsesTool")
NAMESPACE.fields["tools"] = Arr(TOOL)  # a namespace groups tools: the one recursive rule (depth: MAX_NESTING)

_OUTPUT = Either(Str(), Arr(PART))
_CALL = {"call_id": Str(), "name": _NAME}
ITEM = Tagged(
    "type",
    {
        "message": Obj({"role": Str(enum=ROLES), "content": Either(Str(), Arr(PART))}, required=("role", "content")),
        "function_call": Obj({**_CALL, "arguments": Str()}, required=("call_id", "name", "arguments")),
        "function_call_output": Obj({"call_id": Str(), "output": _OUTPUT}, required=("call_id", "output")),
        "custom_tool_call": Obj({**_CALL, "input": Str()}, required=("call_id", "name", "input")),
        "custom_tool_call_output": Obj({"call_id": Str(), "output": _OUTPUT}, required=("call_id", "output")),
        "additional_tools": Obj({"tools": Arr(TOOL)}, required=("tools",)),
    },
    default="message",  # an item with a role and no type is a message (EasyInputMessage)
    name="ResponsesInputItem",
)
TOOL_CHOICE = Either(Str(enum=TOOL_CHOICES), Obj({"type": Str(), "name": Str()}, required=("type",)))
FORMAT = Tagged(
    "type",
    {
        "text": Obj({}),
        "json_object": Obj({}),
        "json_schema": Obj({"name": Str(), "schema": Obj({}), "strict": Bool()}),
    },
)

RESPONSES_REQUEST = Obj(
    {
        "model": MODEL,
        "input": Either(Str(nonblank=True), Arr(ITEM, min_items=1)),
        "instructions": Str(),
        "stream": Bool(),
        "max_output_tokens": TOKEN_COUNT,
        "temperature": Num(0, 2),
        "top_p": Num(0, 1),
        "tools": Arr(TOOL),
        "tool_choice": TOOL_CHOICE,
        "parallel_tool_calls": Bool(),
        "text": Obj({"format": FORMAT}),
        "prompt_cache_key": Str(),
        "previous_response_id": Str(),
        "user": Str(),
        "store": Bool(),
        "include": Arr(Str()),
        "metadata": Obj({}),
        "reasoning": Obj({}),
        "service_tier": Str(),
        "truncation": Str(),
        "provider": PROVIDER,
    },
    required=("model", "input"),
    name="ResponsesRequest",
)
