"""The tests' own waiting helpers: return as soon as the condition holds, fail with the reason when it never does."""

from __future__ import annotations

import itertools

import pytest

from tests.waiting import ManualClock, poll_until, wait_until


def test_wait_until_returns_the_first_truthy_value_without_waiting_longer():
    polls = itertools.count()
    assert wait_until(lambda: next(polls) >= 2 and "ready", timeout=5, message="never ready", interval=0.001) == "ready"
    assert next(polls) == 3  # polled three times, then stopped


def test_wait_until_fails_with_the_message_when_the_condition_never_holds():
    with pytest.raises(AssertionError, match=r"not within 0\.05s: the worker stayed busy"):
        wait_until(lambda: False, timeout=0.05, message="the worker stayed busy", interval=0.01)


def test_poll_until_returns_the_last_value_when_the_condition_never_holds():
    polls = itertools.count()
    assert poll_until(lambda: next(polls) >= 1000 and "ready", timeout=0.05, interval=0.01) is False
    assert 2 <= next(polls) < 1000  # polled until the timeout, then gave the falsy value back


def test_manual_clock_moves_only_when_advanced():
    clock = ManualClock(start=10.0)
    assert clock() == 10.0
    clock.advance(0.5)
    assert clock() == 10.5
