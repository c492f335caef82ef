"""The one provider-usage reader (contracts.provider_usage), pinned per usage dialect."""

from __future__ import annotations

import pytest

from contracts.provider_usage import (
    USAGE_DIALECTS,
    read_counts,
    read_reported_cost,
    read_tokens,
    to_tokens,
    usage_problem,
)
from contracts.usage import Tokens

# (usage_dialect, provider usage JSON, cached_tokens_in_input, expected tokens)
DIALECTS = [
    pytest.param(
        "openai",
        {
            "prompt_tokens": 100,
            "prompt_tokens_details": {"cached_tokens": 30, "audio_tokens": 0},
            "completion_tokens": 20,
            "completion_tokens_details": {"reasoning_tokens": 12, "audio_tokens": 0},
        },
        True,
        Tokens(70, 30, 0, 0, 20, 12),
        id="openai",
    ),
    pytest.param(
        "openai",
        {
            "prompt_tokens": 100,
            "prompt_tokens_details": {"cached_tokens": 10, "cache_write_tokens": 40},
            "completion_tokens": 5,
        },
        True,
        Tokens(50, 10, 40, 0, 5, 0),
        id="openai-aggregator-cache-write",
    ),
    pytest.param(
        "deepseek",
        {
            "prompt_tokens": 100,
            "prompt_cache_hit_tokens": 60,
            "prompt_cache_miss_tokens": 40,
            "prompt_tokens_details": {"cached_tokens": 60},
            "completion_tokens": 9,
            "completion_tokens_details": {"reasoning_tokens": 4},
        },
        True,
        Tokens(40, 60, 0, 0, 9, 4),
        id="deepseek",
    ),
    pytest.param(
        "deepseek",
        {"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 25}, "completion_tokens": 9},
        True,
        Tokens(75, 25, 0, 0, 9, 0),
        id="deepseek-details-only",
    ),
    pytest.param(
        "moonshot",
        {"prompt_tokens": 100, "cached_tokens": 30, "completion_tokens": 5},
        True,
        Tokens(70, 30, 0, 0, 5, 0),
        id="moonshot",
    ),
    pytest.param(
        "moonshot",
        {
            "prompt_tokens": 100,
            "cached_tokens": 30,
            "completion_tokens": 50,
            "completion_tokens_details": {"reasoning_tokens": 35},
        },
        True,
        Tokens(70, 30, 0, 0, 50, 35),
        id="kimi-thinking-reasoning",
    ),
    pytest.param(
        "zhipu",
        {
            "prompt_tokens": 100,
            "prompt_tokens_details": {"cached_tokens": 40},
            "completion_tokens": 8,
            "completion_tokens_details": {"reasoning_tokens": 3},
        },
        True,
        Tokens(60, 40, 0, 0, 8, 3),
        id="zhipu",
    ),
    pytest.param(
        "qwen",
        {"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 20}, "completion_tokens": 5},
        True,
        Tokens(80, 20, 0, 0, 5, 0),
        id="qwen-implicit",
    ),
    pytest.param(
        "qwen",
        {
            "prompt_tokens": 2000,
            "prompt_tokens_details": {
                "cached_tokens": 0,
                "cache_creation_input_tokens": 1500,
                "cache_creation": {"ephemeral_5m_input_tokens": 1500},
                "cache_type": "ephemeral",
            },
            "completion_tokens": 10,
            "completion_tokens_details": {"reasoning_tokens": 6},
        },
        True,
        Tokens(500, 0, 1500, 0, 10, 6),
        id="qwen-explicit-write",
    ),
    pytest.param(
        "qwen",
        {
            "prompt_tokens": 2000,
            "prompt_tokens_details": {"cached_tokens": 100, "cache_creation_input_tokens": 900},
            "completion_tokens": 10,
        },
        True,
        Tokens(1000, 100, 900, 0, 10, 0),
        id="qwen-write-total-only",
    ),
    pytest.param(
        "qwen",
        {
            "prompt_tokens": 2000,
            "prompt_tokens_details": {
                "cached_tokens": 0,
                "cache_creation_input_tokens": 1500,
                "cache_creation": {"ephemeral_5m_input_tokens": 500, "ephemeral_1h_input_tokens": 1000},
            },
            "completion_tokens": 10,
        },
        True,
        Tokens(500, 0, 500, 1000, 10, 0),
        id="qwen-explicit-1h",
    ),
    pytest.param(
        "anthropic",
        {
            "input_tokens": 10,
            "cache_read_input_tokens": 50,
            "cache_creation_input_tokens": 40,
            "cache_creation": {"ephemeral_5m_input_tokens": 30, "ephemeral_1h_input_tokens": 10},
            "output_tokens": 7,
        },
        False,
        Tokens(10, 50, 30, 10, 7, 0),
        id="anthropic",
    ),
    pytest.param(
        "anthropic",
        {"input_tokens": 10, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 40, "output_tokens": 7},
        False,
        Tokens(10, 0, 40, 0, 7, 0),
        id="anthropic-total-write-only",
    ),
]


@pytest.mark.parametrize(("dialect", "usage", "cached_in_input", "expected"), DIALECTS)
def test_each_dialect_reads_every_count(dialect, usage, cached_in_input, expected):
    tokens, flags = read_tokens(dialect, usage, cached_in_input=cached_in_input, ceiling=10**6)
    assert tokens == expected and flags == ()
    assert usage_problem(dialect, usage) is None


def test_the_table_covers_every_usage_dialect():
    assert {p.values[0] for p in DIALECTS} == set(USAGE_DIALECTS)


def test_cache_reported_on_top_of_input_is_added_to_the_input_total():
    usage = {"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 30}, "completion_tokens": 1}
    tokens, _ = read_tokens("openai", usage, cached_in_input=False)
    assert tokens.input_uncached == 100 and tokens.input_total == 130


def test_unknown_dialects_read_as_openai():
    usage = {"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 4}, "completion_tokens": 2}
    assert read_counts("somebody-new", usage) == read_counts("openai", usage)


def test_absurd_numbers_are_clamped_and_flagged():
    counts = read_counts(
        "openai", {"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 150}, "completion_tokens": -3}
    )
    tokens, flags = to_tokens(counts, cached_in_input=True, ceiling=10_000)
    assert tokens == Tokens(input_uncached=0, cache_read=100, output=0)
    assert set(flags) == {"clamped_negative", "clamped_cache_read"}
    huge, flags = read_tokens(
        "openai", {"prompt_tokens": 10**9, "completion_tokens": 1}, cached_in_input=True, ceiling=1000
    )
    assert huge.input_uncached == 1000 and "clamped_absurd" in flags
    unbounded, flags = read_tokens("openai", {"prompt_tokens": 10**9, "completion_tokens": 1}, cached_in_input=True)
    assert unbounded.input_uncached == 10**9 and flags == ()


def test_the_lenient_reading_counts_wrong_types_as_zero():
    usage = {"prompt_tokens": "12", "completion_tokens": True, "prompt_tokens_details": [1]}
    assert read_tokens("openai", usage, cached_in_input=True) == (Tokens(), ())


@pytest.mark.parametrize(
    ("dialect", "usage", "problem"),
    [
        ("openai", None, "usage is missing or not an object"),
        ("openai", {"completion_tokens": 1}, "usage has no prompt_tokens"),
        ("anthropic", {"input_tokens": 1}, "usage has no output_tokens"),
        ("openai", {"prompt_tokens": -5, "completion_tokens": "x"}, "'prompt_tokens' is not a non-negative integer"),
        ("openai", {"prompt_tokens": 5, "completion_tokens": 1, "prompt_tokens_details": 3}, "is not an object"),
        ("deepseek", {"prompt_tokens": 5, "completion_tokens": 1, "prompt_cache_hit_tokens": 1.5}, "hit_tokens"),
        (
            "qwen",
            {
                "prompt_tokens": 5,
                "completion_tokens": 1,
                "prompt_tokens_details": {"cache_creation": {"ephemeral_5m_input_tokens": -1}},
            },
            "ephemeral_5m",
        ),
        ("anthropic", {"output_tokens": 1, "cache_creation": {"ephemeral_1h_input_tokens": False}}, "ephemeral_1h"),
    ],
)
def test_usage_problem_names_what_is_malformed(dialect, usage, problem):
    found = usage_problem(dialect, usage)
    assert found is not None and problem in found


@pytest.mark.parametrize(
    ("usage", "micros"),
    [
        ({"prompt_tokens": 10, "completion_tokens": 5, "cost": 0.000123}, 123),  # OpenRouter: USD
        ({"cost": 2}, 2_000_000),
        ({"cost": 0}, 0),
        ({"prompt_tokens": 10, "completion_tokens": 5}, None),  # the wire gives none
        ({"cost": "0.5"}, None),  # malformed costs are never booked
        ({"cost": True}, None),
        ({"cost": -0.01}, None),
        ({"cost": float("nan")}, None),
        ({"cost": float("inf")}, None),
        ({"cost": 1e300}, None),  # beyond any sane bill (and a bigint column)
    ],
)
def test_the_providers_own_cost_is_read_in_micro_units_or_not_at_all(usage, micros):
    assert read_reported_cost(usage) == micros
