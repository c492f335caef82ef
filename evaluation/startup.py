"""At beat start: dispatch at once (new offerings' integrity probes are due immediately) and refresh
the statistics soon after, so a fresh deployment learns which offerings are dishonest within a minute
instead of at the first beat period or the first hourly probe."""

from __future__ import annotations

from typing import Any

from celery.signals import beat_init

# The first probes take a few seconds against the simulated fleet, a few more against real providers.
STARTUP_REFRESH_S = (15, 40)


@beat_init.connect
def _probe_integrity_at_start(sender: Any = None, **_: Any) -> None:
    from evaluation.tasks import probes_dispatch_task, stats_refresh_task

    probes_dispatch_task.apply_async(queue="default")
    for delay in STARTUP_REFRESH_S:
        stats_refresh_task.apply_async(queue="default", countdown=delay)
