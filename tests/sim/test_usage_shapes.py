"""Every usage shape the fleet reports reads back, through the gateway's reader, as the fleet's true usage."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from contracts.provider_usage import read_tokens, usage_problem
from sim.dialects.anthropic_response import usage as anthropic_usage
from sim.dialects.usage_shapes import SHAPES, usage_object
from sim.usage import SimUsage

TRUTHS = [
    SimUsage(input_total=1200, cache_read=0, cache_write_5m=0, cache_write_1h=0, output=40, reasoning=0),
    SimUsage(input_total=1200, cache_read=1024, cache_write_5m=0, cache_write_1h=0, output=40, reasoning=25),
    SimUsage(input_total=3000, cache_read=0, cache_write_5m=1800, cache_write_1h=0, output=40, reasoning=0),
    SimUsage(input_total=3000, cache_read=200, cache_write_5m=600, cache_write_1h=1200, output=90, reasoning=30),
]
# What each shape cannot carry (the real provider does not report it), so the reading is 0 there.
NOT_REPORTED = {
    "openai": {"cache_write_5m", "cache_write_1h"},
    "deepseek": {"cache_write_5m", "cache_write_1h"},
    "moonshot": {"cache_write_5m", "cache_write_1h", "reasoning"},
    "zhipu": {"cache_write_5m", "cache_write_1h", "reasoning"},
    "qwen": set(),
    "anthropic": {"reasoning"},  # thinking is billed inside output_tokens
}


def _expected(truth: SimUsage, usage_dialect: str) -> dict[str, int]:
    expected = {name: value for name, value in truth.as_dict().items() if name != "input_total"}
    for name in NOT_REPORTED[usage_dialect]:
        if name.startswith("cache_write"):
            expected["input_uncached"] += expected[name]  # counted in prompt_tokens, billed as plain input
        expected[name] = 0
    return expected


def _read(usage_dialect: str, raw: dict) -> dict[str, int]:
    assert usage_problem(usage_dialect, raw) is None
    tokens, flags = read_tokens(usage_dialect, raw, cached_in_input=usage_dialect != "anthropic", ceiling=10**6)
    assert flags == ()
    return {name: getattr(tokens, name) for name in _expected(TRUTHS[0], "qwen")}


@pytest.mark.parametrize("truth", TRUTHS)
@pytest.mark.parametrize("usage_dialect", sorted(SHAPES))
def test_openai_compatible_shapes_read_back_as_the_truth(usage_dialect, truth):
    assert _read(usage_dialect, usage_object(usage_dialect, truth)) == _expected(truth, usage_dialect)


@pytest.mark.parametrize("truth", TRUTHS)
def test_anthropic_shape_reads_back_as_the_truth(truth):
    raw = anthropic_usage(SimpleNamespace(usage=truth), output_tokens=truth.output)
    assert _read("anthropic", raw) == _expected(truth, "anthropic")


def test_every_usage_dialect_has_a_shape():
    assert set(NOT_REPORTED) == {*SHAPES, "anthropic"}
