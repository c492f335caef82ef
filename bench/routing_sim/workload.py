"""The replayed traffic: chat, agent sessions with long shared prefixes, long-context jobs, bursts.

Prompts are the simulator's own ``sim.prompt.Prompt`` built from segments whose identity stands for
their content (the same bytes = the same text), with token counts drawn here: the fleet's cache,
limits and timing see exactly what they would see for text of that size, without megabytes of text.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass

from sim.prompt import Prompt, Segment, ToolSpec

DURATION_S = 600.0  # 10 virtual minutes: ~1,000 requests a minute, bursts on top
# Chat traffic per model (weights); agents and long-context jobs use the models people use for them.
CHAT_MODELS = {"deepseek-v3.2": 30, "kimi-k2": 18, "glm-4.6": 15, "deepseek-r1": 10, "gpt-4.1": 8,
               "qwen3-coder-plus": 7, "claude-sonnet-4.5": 6, "gemini-2.5-flash": 6}  # fmt: skip
AGENT_MODELS = {"claude-sonnet-4.5": 30, "kimi-k2": 30, "deepseek-v3.2": 25, "glm-4.6": 15}
LONG_MODELS = {"qwen3-coder-plus": 35, "kimi-k2": 25, "gpt-4.1": 25, "gemini-2.5-flash": 15}
BURST_MODELS = {"deepseek-v3.2": 60, "glm-4.6": 40}
SHARE = {"chat": 0.50, "agent": 0.32, "long": 0.04, "burst": 0.14}  # of all requests
APPS = 6  # chat apps, each with its own ~1.2k-token system prompt (a shared prefix across users)
TOOL = ToolSpec("run", {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]})


@dataclass(frozen=True, slots=True)
class Request:
    index: int
    at: float  # virtual seconds from the start
    kind: str  # chat | agent | long | burst
    model: str
    prompt: Prompt
    max_tokens: int
    params: frozenset[str]
    session: str | None  # the conversation (cache affinity), None for one-off requests


def _seg(name: str, tokens: int, ttl: str | None = None) -> Segment:
    ident = name.encode()
    return Segment(norm=ident, raw=ident, tokens=tokens, ttl=ttl)


def _prompt(segments: list[Segment], *, max_tokens: int, tools: bool = False, after_tool: bool = False) -> Prompt:
    prompt = Prompt(max_tokens=max_tokens, stream=True, after_tool_result=after_tool)
    for segment in segments:
        prompt.add(segment)
    if tools:
        prompt.tools = [TOOL]
    return prompt


def _pick(rng: random.Random, weights: dict[str, int]) -> str:
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def _chat(rng: random.Random, i: int, at: float, kind: str, model: str | None = None) -> Request:
    model = model or _pick(rng, CHAT_MODELS)
    app = rng.randrange(APPS)
    system = _seg(f"app{app}:system", 1200)
    user = _seg(f"chat{i}:user", rng.randint(50, 1500))
    prompt = _prompt([system, user], max_tokens=512)
    return Request(i, at, kind, model, prompt, 512, frozenset(), None)


def _long(rng: random.Random, i: int, at: float) -> Request:
    doc = rng.randrange(20)  # a few documents asked about again and again
    segments = [_seg(f"doc{doc}", 30_000 + doc * 4_000), _seg(f"long{i}:question", rng.randint(50, 400))]
    prompt = _prompt(segments, max_tokens=2048)
    return Request(i, at, "long", _pick(rng, LONG_MODELS), prompt, 2048, frozenset(), None)


def _session(rng: random.Random, first: int, start: float, turns: int, pace: float) -> list[Request]:
    """One agent session: a 6k-token system prompt and tools, then turns that each add 0.5-4k tokens;
    cache breakpoints on the system prompt and the newest message (as coding agents place them)."""
    sid = f"s{first}"
    model = _pick(rng, AGENT_MODELS)
    system = _seg(f"{sid}:system-and-tools", 6000 + rng.randint(0, 4000), "5m")
    history: list[Segment] = []
    out, at = [], start
    for turn in range(turns):
        history.append(_seg(f"{sid}:turn{turn}", rng.randint(500, 4000)))
        newest = dataclasses.replace(history[-1], ttl="5m")
        prompt = _prompt([system, *history[:-1], newest], max_tokens=4096, tools=True, after_tool=turn % 3 == 2)
        out.append(Request(first + turn, at, "agent", model, prompt, 4096, frozenset({"tools"}), sid))
        at += rng.uniform(4.0, 25.0) * pace  # the agent runs its tool, then asks again
    return out


def build(
    n: int, *, seed: int = 1, duration_s: float = DURATION_S, share: dict[str, float] | None = None
) -> list[Request]:
    """``n`` requests over ``duration_s`` virtual seconds, in arrival order (``share``: of each kind)."""
    rng = random.Random(seed)
    out: list[Request] = []
    budget = {kind: int(n * part) for kind, part in (share or SHARE).items()}
    budget["chat"] += n - sum(budget.values())
    while budget["agent"] > 0:
        turns = min(budget["agent"], rng.randint(8, 30))
        pace = min(1.0, duration_s / DURATION_S)  # a compressed mix compresses the agents' pauses too
        out += _session(rng, 1_000_000 + len(out), rng.uniform(0, duration_s * 0.9), turns, pace)
        budget["agent"] -= turns
    for _ in range(budget["long"]):
        out.append(_long(rng, len(out), rng.uniform(0, duration_s)))
    while budget["burst"] > 0:  # a client's batch: 100-250 requests within 5 s
        size, start, model = (
            min(budget["burst"], rng.randint(100, 250)),
            rng.uniform(0, duration_s),
            _pick(rng, BURST_MODELS),
        )
        out += [_chat(rng, len(out) + k, start + rng.uniform(0, 5.0), "burst", model) for k in range(size)]
        budget["burst"] -= size
    out += [_chat(rng, len(out) + k, rng.uniform(0, duration_s), "chat") for k in range(budget["chat"])]
    out.sort(key=lambda r: r.at)
    return [dataclasses.replace(r, index=i) for i, r in enumerate(out)]
