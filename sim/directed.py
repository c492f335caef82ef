"""A tool call the prompt asks for by name: deterministic, for end-to-end tests of agents.

``Call the tool NAME with {JSON arguments}`` in the last user message makes the simulated model
call that tool (when the request offers it) with exactly those arguments, instead of a tool and
arguments drawn at random.
"""

from __future__ import annotations

import re

import orjson

from sim.prompt import Prompt, ToolSpec

_DIRECTIVE = re.compile(r"call the tool [`'\"]?([A-Za-z0-9_.-]+)[`'\"]? with (\{.*\})", re.IGNORECASE | re.DOTALL)


def requested(prompt: Prompt) -> tuple[ToolSpec, str] | None:
    """(tool, arguments JSON) the last user message asks for, if the request offers that tool."""
    match = _DIRECTIVE.search(prompt.last_user_text)
    if match is None:
        return None
    tool = next((t for t in prompt.tools if t.name == match.group(1)), None)
    try:
        arguments = orjson.loads(match.group(2))
    except orjson.JSONDecodeError:
        return None
    if tool is None or not isinstance(arguments, dict):
        return None
    return tool, orjson.dumps(arguments).decode()
