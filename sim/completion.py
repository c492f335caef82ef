"""What the simulated model answers: text pieces, reasoning, tool calls, finish reason."""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson

from contracts.tokens import count_text_tokens
from sim import tasks, toolargs
from sim.content import ANSWERS, THOUGHTS, fit_tokens, split_text
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
    named = [tool for tool in prompt.tools if tool.name == prompt.tool_choice]
    tool = named[0] if named else prompt.tools[draws.below(len(prompt.tools))]
    arguments = orjson.dumps(toolargs.sample(tool.schema, draws) or {}).decode()
    return ToolCall(id=f"{id_prefix}{draws.hex_id(24)}", name=tool.name, arguments=arguments)


def _answer_pieces(prompt: Prompt, profile: Profile, draws: Draws) -> list[str]:
    rate = profile.dishonesty.wrong_answer_rate if profile.dishonesty.quantized else 0.0
    solved = tasks.answer(prompt.last_user_text, wrong_rate=rate, draws=draws) if prompt.last_user_text else None
    if solved is not None:
        return split_text(solved)
    low, high = profile.output_tokens
    pieces = ANSWERS.take(draws, low + draws.below(max(1, high - low + 1)))
    if prompt.json_mode:
        return split_text(orjson.dumps({"answer": "".join(pieces).strip(), "ok": True}).decode())
    return pieces


def build(prompt: Prompt, profile: Profile, draws: Draws, *, max_tokens: int, tool_id_prefix: str) -> Completion:
    completion = Completion()
    thinks = profile.reasoning if prompt.reasoning is None else prompt.reasoning
    if thinks:
        completion.reasoning_pieces = THOUGHTS.take(draws, 30 + draws.below(60))
        completion.reasoning_tokens = count_text_tokens(completion.reasoning_text)
    if _wants_tool(prompt):
        completion.tool_calls = [_tool_call(prompt, draws, tool_id_prefix)]
        completion.finish = "tool_calls"
        call = completion.tool_calls[0]
        completion.output_tokens = (
            completion.reasoning_tokens + count_text_tokens(call.name) + count_text_tokens(call.arguments)
        )
        return completion
    budget = max(1, max_tokens - completion.reasoning_tokens)
    pieces, cut = fit_tokens(_answer_pieces(prompt, profile, draws), budget)
    completion.pieces = pieces
    completion.finish = "length" if cut else "stop"
    completion.output_tokens = completion.reasoning_tokens + count_text_tokens(completion.text)
    return completion
