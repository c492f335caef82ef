"""The instruction budget's checker: a measurement over its ceiling fails, with measured vs ceiling shown."""

from __future__ import annotations

import pytest

from bench.instruction_budget import CEILINGS, check, load_ceilings, report

CEILINGS_TOML = """
[short]
measured = 2_000_000
ceiling = 2_060_000

[paced]
unit = "relayed chunk"
measured = 70_000
ceiling = 72_100
"""


def test_a_measurement_over_its_ceiling_fails_and_says_by_how_much() -> None:
    verdicts = check({"short": 2_100_000, "paced": 69_000}, load_ceilings(CEILINGS_TOML))

    assert [(v.profile, v.passed) for v in verdicts] == [("short", False), ("paced", True)]
    text = report(verdicts)
    assert "| short (per request) | 2,100,000 | 2,060,000 | +1.9 % FAIL: over the ceiling |" in text
    assert "| paced (per relayed chunk) | 69,000 | 72,100 | -4.3 % ok |" in text
    assert "short over the ceiling" in text


def test_a_measurement_at_its_ceiling_passes() -> None:
    verdicts = check({"short": 2_060_000, "paced": 72_100}, load_ceilings(CEILINGS_TOML))

    assert all(v.passed for v in verdicts)
    assert "every profile within its ceiling" in report(verdicts)


def test_a_profile_left_unmeasured_fails() -> None:
    verdicts = check({"short": 1_900_000}, load_ceilings(CEILINGS_TOML))

    assert [(v.profile, v.passed) for v in verdicts] == [("short", True), ("paced", False)]
    assert "| paced | not measured | 72,100 | FAIL: no measurement |" in report(verdicts)


def test_a_ceiling_below_its_own_measurement_is_refused() -> None:
    with pytest.raises(ValueError, match="below its own measurement"):
        load_ceilings("[short]\nmeasured = 2_000_000\nceiling = 1_900_000\n")


def test_the_repository_keeps_a_ceiling_for_each_hot_path() -> None:
    ceilings = load_ceilings(CEILINGS.read_text())

    assert set(ceilings) == {"short", "realistic", "paced"}
    for ceiling in ceilings.values():  # a margin for noise, not a blank cheque
        assert ceiling.measured <= ceiling.ceiling <= ceiling.measured * 1.06
