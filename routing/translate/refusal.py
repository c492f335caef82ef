"""Which request feature an upstream dialect cannot honour: the ``refused`` rows of the translation table.

``refused(caller, body, upstream)`` names the first such feature (or None). ``caller`` is the body's
dialect ("openai" for chat completions and the Responses caller's chat body, "anthropic" for Messages).
A ``Refusal`` that another dialect could honour lets the route move on; one no dialect could (a
tool_choice naming a tool the request does not offer) ends it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Body = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Refusal:
    param: str
    message: str
    elsewhere: bool = True  # an offering of the other dialect could serve it


def _chat_tool_names(body: Body) -> set[str]:
    return {str((t.get("function") or {}).get("name", "")) for t in body.get("tools") or () if isinstance(t, dict)}


def _chat_unknown_tool(body: Body) -> Refusal | None:
    choice = body.get("tool_choice")
    if not isinstance(choice, dict):
        return None
    name = (choice.get("function") or {}).get("name") or choice.get("name")
    if name is None or name in _chat_tool_names(body):
        return None
    return Refusal("tool_choice", f"tool_choice names the tool {name!r}, which is not among the tools.", False)


def _messages_unknown_tool(body: Body) -> Refusal | None:
    choice = body.get("tool_choice")
    if not isinstance(choice, dict) or choice.get("type") != "tool":
        return None
    names = {str(t.get("name", "")) for t in body.get("tools") or () if isinstance(t, dict)}
    if choice.get("name") in names:
        return None
    return Refusal(
        "tool_choice", f"tool_choice names the tool {choice.get('name')!r}, which is not among the tools.", False
    )


def _unsupported(param: str, what: str, dialect: str) -> Refusal:
    return Refusal(param, f"{param}: {what} is not supported by the {dialect} offerings serving this model.")


def _parts(body: Body) -> list[Body]:
    out: list[Body] = []
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            out.extend(p for p in content if isinstance(p, dict))
    return out


def _chat_for_anthropic(body: Body) -> Refusal | None:
    n = body.get("n")
    if isinstance(n, int) and n > 1:
        return _unsupported("n", "more than one choice", "Anthropic-dialect")
    if body.get("logprobs") or body.get("top_logprobs"):
        return _unsupported("logprobs", "token log probabilities", "Anthropic-dialect")
    if body.get("seed") is not None:
        return _unsupported("seed", "a sampling seed", "Anthropic-dialect")
    for name in ("frequency_penalty", "presence_penalty"):
        if body.get(name):
            return _unsupported(name, "a non-zero penalty", "Anthropic-dialect")
    if body.get("logit_bias"):
        return _unsupported("logit_bias", "a logit bias", "Anthropic-dialect")
    for name in ("audio", "prediction", "web_search_options"):
        if body.get(name) is not None:  # {} asks for web search with its defaults
            return _unsupported(name, name.replace("_", " "), "Anthropic-dialect")
    if "audio" in (body.get("modalities") or ()):
        return _unsupported("modalities", "audio output", "Anthropic-dialect")
    for part in _parts(body):
        kind = part.get("type")
        if kind == "file" and not str((part.get("file") or {}).get("file_data") or "").startswith("data:"):
            return _unsupported("messages", "a file part without inline file_data", "Anthropic-dialect")
        if kind not in ("text", "image_url", "file", "refusal"):
            return _unsupported("messages", f"a {kind!r} content part", "Anthropic-dialect")
    return None


_SERVER_FIELDS = ("mcp_servers", "container")


def _messages_for_openai(body: Body) -> Refusal | None:
    if body.get("top_k") is not None:
        return _unsupported("top_k", "top_k sampling", "OpenAI-dialect")
    for name in _SERVER_FIELDS:
        if body.get(name):
            return _unsupported(name, name.replace("_", " "), "OpenAI-dialect")
    for tool in body.get("tools") or ():
        if isinstance(tool, dict) and "input_schema" not in tool:
            return _unsupported("tools", f"the server tool {tool.get('type')!r}", "OpenAI-dialect")
    for part in _parts(body):
        kind = part.get("type")
        source = part.get("source") or {}
        if kind == "document" and source.get("type") not in ("base64", "text"):
            return _unsupported("messages", "a document block not sent inline", "OpenAI-dialect")
        if kind in ("search_result", "container_upload", "server_tool_use", "web_search_tool_result"):
            return _unsupported("messages", f"a {kind!r} block", "OpenAI-dialect")
    return None


Check = Callable[[Body], "Refusal | None"]
_CHECKS: dict[tuple[str, str], tuple[Check, ...]] = {
    ("openai", "openai"): (_chat_unknown_tool,),
    ("openai", "anthropic"): (_chat_unknown_tool, _chat_for_anthropic),
    ("anthropic", "anthropic"): (_messages_unknown_tool,),
    ("anthropic", "openai"): (_messages_unknown_tool, _messages_for_openai),
}


def refused(caller: str, body: Body, upstream: str) -> Refusal | None:
    for check in _CHECKS.get(("anthropic" if caller == "anthropic" else "openai", upstream), ()):
        found = check(body)
        if found is not None:
            return found
    return None
