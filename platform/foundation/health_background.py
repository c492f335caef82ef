"""Health checks run in the background, so that answering ``/healthz`` reads memory only.

Each component (the project lists them: ``tokenway.health.COMPONENTS``) is checked on a daemon thread of
its own, every ``interval_s``: a stalled database (a frozen server, a lost connection, a saturated host) holds up its own
thread and nothing else, and never the event loop serving requests. A reading older than its
interval plus ``CHECK_DEADLINE_S`` means the check is hanging: the component is reported down
(``"error": "check_timeout"``) until it returns.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from django.db import connections

from foundation.env import env_float
from foundation.health import Component, ComponentStatus

# A check that has not come back this long after it was due is down: a load balancer's own health
# check timeout is typically 2-5 s, and a healthy database or Redis answers in milliseconds.
CHECK_DEADLINE_S = env_float("TOKENWAY_HEALTH_CHECK_DEADLINE", 2.0)
STOP_WAIT_S = 1.0  # at shutdown, for the checks in progress to end and close their connections


@dataclass(frozen=True, slots=True)
class Reading:
    status: ComponentStatus | None  # None: the component is not part of this deployment
    at: float  # time.monotonic() when the check returned


class BackgroundChecks:
    def __init__(self, components: list[Component], *, deadline_s: float = CHECK_DEADLINE_S) -> None:
        self.components = components
        self.deadline_s = deadline_s
        self._readings: dict[str, Reading] = {}
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return bool(self._threads)

    def start(self) -> None:
        with self._lock:  # the lifespan and a first request may both ask
            if self._threads:
                return
            self._stop = stop = threading.Event()  # this run's own: a stopped run's threads never see it cleared
            for component in self.components:
                thread = threading.Thread(target=self._run, args=(component, stop), name=f"health-{component.name}")
                thread.daemon = True  # a check stuck in a driver call must not hold up the process's exit
                thread.start()
                self._threads.append(thread)

    def stop(self) -> None:
        """Checks in progress finish (a hung one is left behind: its thread is a daemon)."""
        with self._lock:
            self._stop.set()
            for thread in self._threads:
                thread.join(timeout=STOP_WAIT_S / len(self._threads))
            self._threads.clear()

    def _run(self, component: Component, stop: threading.Event) -> None:
        try:
            while not stop.is_set():
                try:
                    status = component.check()
                except Exception as exc:  # noqa: BLE001 - a check that raises reports its component down
                    status = ComponentStatus(False, {"error": type(exc).__name__})
                self._readings[component.name] = Reading(status, time.monotonic())
                stop.wait(component.interval_s)
        finally:
            connections.close_all()  # this thread's own: a stopped run leaves no session open on the database

    def statuses(self) -> dict[str, ComponentStatus]:
        """Each component's latest status, with its age; a hanging or not yet run check is down."""
        now = time.monotonic()
        out: dict[str, ComponentStatus] = {}
        for component in self.components:
            reading = self._readings.get(component.name)
            if reading is None:
                out[component.name] = ComponentStatus(False, {"error": "not_checked_yet"})
            elif reading.status is not None:
                out[component.name] = self._aged(component, reading.status, now - reading.at)
        return out

    def _aged(self, component: Component, status: ComponentStatus, age: float) -> ComponentStatus:
        detail: dict[str, Any] = {**status.detail, "age_s": round(age, 3)}
        if age > component.interval_s + self.deadline_s:
            return ComponentStatus(False, {**detail, "error": "check_timeout"})
        return ComponentStatus(status.ok, detail)
