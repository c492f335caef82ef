"""The translation table: for each request feature of a caller dialect, what each upstream dialect gets.

``native``: forwarded as sent. ``translated``: the upstream's own field for the same thing.
``emulated``: built from other features (structured output as a forced tool). ``refused``: a 400 in
the caller's shape naming the feature (the route first moves on to an offering of the other dialect,
routing/translate/refusal.py). Nothing in the table is dropped silently. docs/gateway.md renders this
table (tests/routing/test_feature_table.py keeps the two equal).
"""

from __future__ import annotations

from dataclasses import dataclass

NATIVE, TRANSLATED, EMULATED, REFUSED = "native", "translated", "emulated", "refused"
CALLERS = ("chat", "messages", "responses")  # /v1/chat/completions, /v1/messages, /v1/responses


@dataclass(frozen=True, slots=True)
class Feature:
    caller: str  # one of CALLERS
    field: str  # the request field as the caller sends it
    openai: str  # what an OpenAI-dialect (chat completions) offering gets
    anthropic: str  # what an Anthropic-dialect (Messages) offering gets
    how: str  # one line: the translation, emulation or reason for refusal


def _row(caller: str, field: str, openai: str, anthropic: str, how: str) -> Feature:
    return Feature(caller, field, openai, anthropic, how)


TABLE: tuple[Feature, ...] = (
    _row(
        "chat",
        "response_format: json_schema",
        NATIVE,
        EMULATED,
        "a forced tool whose input_schema is the schema; its input comes back as the message content (JSON)",
    ),
    _row(
        "chat",
        "response_format: json_object",
        NATIVE,
        EMULATED,
        "a forced tool taking any object; its input comes back as the message content (JSON)",
    ),
    _row(
        "chat",
        "tools, tool_choice (auto, required, none, named)",
        NATIVE,
        TRANSLATED,
        "tools -> input_schema tools; required -> any; named -> {type: tool}",
    ),
    _row(
        "chat",
        "tool_choice naming a tool not in tools",
        REFUSED,
        REFUSED,
        "400 invalid_request naming tool_choice, before anything is sent",
    ),
    _row("chat", "parallel_tool_calls: false", NATIVE, TRANSLATED, "tool_choice.disable_parallel_tool_use: true"),
    _row(
        "chat",
        "reasoning_effort",
        NATIVE,
        TRANSLATED,
        "thinking {type: enabled, budget_tokens}: minimal 1024, low 2048, medium 8192, high 24576; none: off. "
        "Best effort: not sent to an offering that does not declare reasoning",
    ),
    _row(
        "chat",
        "reasoning {effort, max_tokens}",
        NATIVE,
        TRANSLATED,
        "thinking budget_tokens from max_tokens, else from the effort bucket",
    ),
    _row("chat", "n > 1", NATIVE, REFUSED, "the Messages API returns one answer"),
    _row("chat", "logprobs, top_logprobs", NATIVE, REFUSED, "the Messages API has no token log probabilities"),
    _row("chat", "top_k", NATIVE, TRANSLATED, "top_k"),
    _row("chat", "stop", NATIVE, TRANSLATED, "stop_sequences"),
    _row("chat", "seed", NATIVE, REFUSED, "the Messages API has no sampling seed"),
    _row(
        "chat",
        "frequency_penalty, presence_penalty (non-zero), logit_bias",
        NATIVE,
        REFUSED,
        "the Messages API has no penalties or biases",
    ),
    _row("chat", "image_url parts", NATIVE, TRANSLATED, "image blocks (base64 or url source)"),
    _row("chat", "file parts (file_data)", NATIVE, TRANSLATED, "document blocks (base64 source)"),
    _row(
        "chat",
        "file parts (file_id), input_audio parts",
        NATIVE,
        REFUSED,
        "the Messages API cannot read an OpenAI file id or audio",
    ),
    _row(
        "chat",
        "audio, modalities (audio), prediction, web_search_options",
        NATIVE,
        REFUSED,
        "no Messages API equivalent",
    ),
    _row("chat", "max_tokens, max_completion_tokens", NATIVE, TRANSLATED, "max_tokens"),
    _row("chat", "user", NATIVE, TRANSLATED, "metadata.user_id"),
    _row(
        "messages",
        "output_format / output_config.format (json_schema)",
        TRANSLATED,
        NATIVE,
        "response_format: json_schema",
    ),
    _row(
        "messages",
        "tools, tool_choice (auto, any, none, tool)",
        TRANSLATED,
        NATIVE,
        "function tools; any -> required; tool -> named function",
    ),
    _row(
        "messages",
        "tool_choice.name not in tools",
        REFUSED,
        REFUSED,
        "400 invalid_request naming tool_choice, before anything is sent",
    ),
    _row("messages", "tool_choice.disable_parallel_tool_use", TRANSLATED, NATIVE, "parallel_tool_calls: false"),
    _row(
        "messages",
        "server tools (web_search, code_execution, ...), mcp_servers, container",
        REFUSED,
        NATIVE,
        "chat completions has no server-side tools",
    ),
    _row(
        "messages",
        "thinking",
        TRANSLATED,
        NATIVE,
        "reasoning_effort: budget < 2048 low, < 16384 medium, else high; disabled: none sent. "
        "Best effort: not sent to an offering that does not declare reasoning (the OpenAI API refuses it there)",
    ),
    _row("messages", "top_k", REFUSED, NATIVE, "chat completions has no top_k"),
    _row("messages", "stop_sequences", TRANSLATED, NATIVE, "stop"),
    _row("messages", "image blocks", TRANSLATED, NATIVE, "image_url parts (data: URL or url)"),
    _row("messages", "document blocks (base64 PDF)", TRANSLATED, NATIVE, "file parts with file_data"),
    _row("messages", "document blocks (text source)", TRANSLATED, NATIVE, "text parts"),
    _row(
        "messages",
        "document blocks (url or file source)",
        REFUSED,
        NATIVE,
        "chat completions reads a document only as inline file_data",
    ),
    _row("messages", "metadata.user_id", TRANSLATED, NATIVE, "user"),
    _row(
        "responses",
        "text.format (json_schema, json_object)",
        NATIVE,
        EMULATED,
        "response_format, then as chat (a forced tool on the Messages API)",
    ),
    _row(
        "responses",
        "reasoning.effort",
        TRANSLATED,
        TRANSLATED,
        "reasoning_effort, then as chat; best effort: only to offerings that declare reasoning",
    ),
    _row(
        "responses", "tools, tool_choice, parallel_tool_calls", TRANSLATED, TRANSLATED, "function tools, then as chat"
    ),
    _row("responses", "max_output_tokens", TRANSLATED, TRANSLATED, "max_tokens"),
    _row(
        "responses",
        "input_image, input_file (file_data)",
        TRANSLATED,
        TRANSLATED,
        "image_url and file parts, then as chat",
    ),
)


def markdown() -> str:
    """The table as docs/gateway.md shows it."""
    lines = [
        "| caller | request feature | OpenAI-dialect offering | Anthropic-dialect offering | how |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in TABLE:
        lines.append(f"| {row.caller} | `{row.field}` | {row.openai} | {row.anthropic} | {row.how} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
