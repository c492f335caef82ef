"""Responses tools -> chat-completions function tools, and the map back from a called name.

Function tools keep their schema. ``namespace`` groups (top level or in an ``additional_tools``
input item) are flattened. A ``custom`` tool (free text, maybe constrained by a grammar) becomes a
function taking one string ``input``; its calls go back to the caller as ``custom_tool_call``.
Built-in tools (web search, file search, ...) have no chat equivalent and are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Body = dict[str, Any]

CUSTOM_INPUT = "input"  # the single parameter a custom tool becomes
_NOT_SCHEMA = ("encrypted",)  # annotations some clients put in schemas; strict validators refuse them


@dataclass(frozen=True, slots=True)
class ToolRef:
    kind: str  # "function" | "custom"
    name: str  # the caller's name
    namespace: str | None


@dataclass(slots=True)
class ToolMap:
    """Chat function name -> what the caller declared under it."""

    refs: dict[str, ToolRef] = field(default_factory=dict)
    functions: list[Body] = field(default_factory=list)

    def add(self, tool: Any, namespace: str | None = None) -> None:
        if not isinstance(tool, dict):
            return
        kind = tool.get("type")
        if kind == "namespace":
            for inner in tool.get("tools") or ():
                self.add(inner, tool.get("name") if isinstance(tool.get("name"), str) else None)
        elif kind in ("function", "custom") and isinstance(tool.get("name"), str) and tool["name"]:
            self._declare(tool, str(kind), namespace)

    def _declare(self, tool: Body, kind: str, namespace: str | None) -> None:
        name = tool["name"]
        chat_name = name if name not in self.refs else f"{namespace or 'tools'}__{name}"
        if chat_name in self.refs:
            return  # the same tool declared twice: the first declaration stands
        self.refs[chat_name] = ToolRef(kind, name, namespace)
        function: Body = {"name": chat_name, "parameters": _parameters(tool, kind)}
        description = _description(tool, kind)
        if description:
            function["description"] = description
        self.functions.append({"type": "function", "function": function})

    def chat_name(self, name: str) -> str:
        """The chat name the caller's tool ``name`` was given (its first declaration)."""
        for chat_name, ref in self.refs.items():
            if ref.name == name:
                return chat_name
        return name

    def ref(self, chat_name: str) -> ToolRef:
        return self.refs.get(chat_name) or ToolRef("function", chat_name, None)


def _parameters(tool: Body, kind: str) -> Body:
    if kind == "custom":
        prop = {"type": "string", "description": "The tool's whole input as free text."}
        return {"type": "object", "properties": {CUSTOM_INPUT: prop}, "required": [CUSTOM_INPUT]}
    schema = tool.get("parameters")
    return _clean(schema) if isinstance(schema, dict) else {"type": "object", "properties": {}}


def _clean(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _clean(v) for k, v in node.items() if k not in _NOT_SCHEMA}
    if isinstance(node, list):
        return [_clean(v) for v in node]
    return node


def _description(tool: Body, kind: str) -> str:
    raw = tool.get("description")
    text = raw if isinstance(raw, str) else ""
    fmt = tool.get("format")
    if kind == "custom" and isinstance(fmt, dict) and fmt.get("type") == "grammar":
        text += f"\nThe input must follow this {fmt.get('syntax', '')} grammar:\n{fmt.get('definition', '')}"
    return text.strip()


def tool_choice(choice: Any, tools: ToolMap) -> Any:
    """``auto`` / ``none`` / ``required`` as they are; a named function or custom tool by its chat name."""
    if isinstance(choice, str) and choice in ("auto", "none", "required"):
        return choice
    if isinstance(choice, dict) and choice.get("type") in ("function", "custom") and choice.get("name"):
        return {"type": "function", "function": {"name": tools.chat_name(str(choice["name"]))}}
    return "auto"
