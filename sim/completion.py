"""What the simulated model answers: text pieces, reasoning, tool calls, finish reason."""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson

from contracts.tokens import count_text_tokens
from sim import canary_tasks, directed, toolargs
from sim.content import ANSWERS, THOUGHTS, split_text
from sim.draws import Draws
from sim.profiles import Profile
from sim.prompt import Prompt


@dataclass(slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text


@dataclass(slots=True)
class Completion:
    pieces: list[str] = field(default_factory=list)
    reasoning_pieces: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish: str = "stop"  # stop | length | tool_calls
    output_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    @property
    def reasoning_text(self) -> str:
        return "".join(self.reasoning_pieces)


def _wants_tool(prompt: Prompt) -> bool:
    if not prompt.tools or prompt.tool_choice == "none":
        return False
    return prompt.tool_choice != "auto" or not prompt.after_tool_result


def _tool_call(prompt: Prompt, draws: Draws, id_prefix: str) -> ToolCall:
    asked = directed.requested(prompt)
    if asked is not None:
        return ToolCall(id=f"{id_prefix}{draws.hex_id(24)}", name=asked[0].name, arguments=asked[1])
    named = [tool for tool in prompt.tools if tool.name == prompt.tool_choice]
    tool = named[0] if named else prompt.tools[draws.below(len(prompt.tools))]
    arguments = orjson.dumps(toolargs.sample(tool.schema, draws) or {}).decode()
    return ToolCall(id=f"{id_prefix}{draws.hex_id(24)}", name=tool.name, arguments=arguments)


def _answer(prompt: Prompt, profile: Profile, draws: Draws, budget: int) -> tuple[list[str], int, bool]:
    """Pieces, their token count, and whether ``budget`` cut them."""
    rate = profile.dishonesty.wrong_answer_rate if profile.dishonesty.quantized else 0.0
    solved = canary_tasks.answer(prompt.last_user_text, wrong_rate=rate, draws=draws) if prompt.last_user_text else None
    low, high = profile.output_tokens
    if solved is None and prompt.json_schema is not None:  # as real models answer: an instance of the schema
        solved = orjson.dumps(toolargs.sample(prompt.json_schema, draws)).decode()
    if solved is None and prompt.json_mode:
        pieces, _, _ = ANSWERS.take(draws, low + draws.below(max(1, high - low + 1)))
        solved = orjson.dumps({"answer": "".join(pieces).strip(), "ok": True}).decode()
    if solved is not None:
        tokens = count_text_tokens(solved)
        if tokens > budget:
            solved = solved[: budget * 4]
        return split_text(solved), min(tokens, count_text_tokens(solved)), tokens > budget
    return ANSWERS.take(draws, low + draws.below(max(1, high - low + 1)), budget)


def build(prompt: Prompt, profile: Profile, draws: Draws, *, max_tokens: int, tool_id_prefix: str) -> Completion:
    completion = Completion()
    thinks = profile.reasoning if prompt.reasoning is None else prompt.reasoning
    if thinks:
        completion.reasoning_pieces, completion.reasoning_tokens, _ = THOUGHTS.take(draws, 30 + draws.below(60))
    if _wants_tool(prompt):
        completion.tool_calls = [_tool_call(prompt, draws, tool_id_prefix)]
        completion.finish = "tool_calls"
        call = completion.tool_calls[0]
        completion.output_tokens = (
            completion.reasoning_tokens + count_text_tokens(call.name) + count_text_tokens(call.arguments)
        )
        return completion
    budget = max(1, max_tokens - completion.reasoning_tokens)
    completion.pieces, tokens, cut = _answer(prompt, profile, draws, budget)
    completion.finish = "length" if cut else "stop"
    completion.output_tokens = completion.reasoning_tokens + tokens
    return completion
