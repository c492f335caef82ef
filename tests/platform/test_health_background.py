"""The background health checks' readings: a check runs on its own thread, a hanging one is reported down once
it is late, a raising one down with its error, a component absent from the deployment left out."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from foundation.health import Component, ComponentStatus
from foundation.health_background import BackgroundChecks
from tests.waiting import wait_until


class Gate:
    """A check that answers ok, or hangs while the gate is closed (a database that stopped answering)."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.open.set()

    def __call__(self) -> ComponentStatus:
        self.open.wait()
        return ComponentStatus(True, {"latency_ms": 0.1})


def _raises() -> ComponentStatus:
    raise ConnectionError("refused")


@pytest.fixture
def gate() -> Iterator[Gate]:
    gate = Gate()
    yield gate
    gate.open.set()


@pytest.fixture
def board(gate: Gate) -> Iterator[BackgroundChecks]:
    board = BackgroundChecks(
        [
            Component("store", gate, required=True, interval_s=0.05),
            Component("flaky", _raises, interval_s=0.05),
            Component("absent", lambda: None),
        ],
        deadline_s=0.2,
    )
    yield board
    board.stop()


def _status(board: BackgroundChecks, name: str) -> dict:
    return board.statuses()[name].as_dict()


def test_before_the_first_check_every_component_is_down(board: BackgroundChecks) -> None:
    assert _status(board, "store") == {"status": "down", "error": "not_checked_yet"}


def test_readings_come_from_the_background_and_say_their_age(board: BackgroundChecks) -> None:
    board.start()
    wait_until(lambda: _status(board, "store")["status"] == "ok", timeout=5, message="first reading")
    store = _status(board, "store")
    assert store["age_s"] < 1
    assert _status(board, "flaky") == {"status": "down", "error": "ConnectionError", "age_s": pytest.approx(0, abs=1)}
    assert "absent" not in board.statuses()


def test_a_hanging_check_is_down_once_late_and_back_when_it_returns(board: BackgroundChecks, gate: Gate) -> None:
    board.start()
    wait_until(lambda: _status(board, "store")["status"] == "ok", timeout=5, message="first reading")
    gate.open.clear()
    wait_until(lambda: _status(board, "store").get("error") == "check_timeout", timeout=5, message="late check")
    late = _status(board, "store")
    assert late["status"] == "down" and late["age_s"] >= 0.25  # interval + deadline
    gate.open.set()
    wait_until(lambda: _status(board, "store")["status"] == "ok", timeout=5, message="back after the check returned")
