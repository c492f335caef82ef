"""Celery task functions end in ``_task``; the names beat and the queue routes use stay registered."""

from __future__ import annotations

import importlib

import pytest
from celery import Task

from tokenway.celery import app

TASK_MODULES = ("metering.tasks", "evaluation.tasks", "tokenway.tasks")


@pytest.fixture(scope="module")
def registered() -> dict[str, Task]:
    app.loader.import_default_modules()
    return {name: task for name, task in app.tasks.items() if not name.startswith("celery.")}


def test_every_beat_entry_names_a_registered_task(registered):
    missing = {entry: spec["task"] for entry, spec in app.conf.beat_schedule.items() if spec["task"] not in registered}
    assert missing == {}


def test_task_functions_end_in_task(registered):
    for module_name in TASK_MODULES:
        module = importlib.import_module(module_name)
        tasks = {attr: value for attr, value in vars(module).items() if isinstance(value, Task)}
        assert tasks, module_name
        for attr, task in tasks.items():
            assert attr.endswith("_task"), f"{module_name}.{attr}"
            assert task.name in registered


def test_registered_names_are_the_ones_beat_and_routes_were_written_for(registered):
    assert {
        "metering.tasks.usage_ingest", "metering.tasks.holds_reap", "metering.tasks.reconciliation_run",
        "metering.tasks.stripe_meter_push", "metering.tasks.stripe_customer_ensure",
        "evaluation.probes_dispatch", "evaluation.probe_batch", "evaluation.stats_refresh",
        "evaluation.probe_results_prune", "tokenway.tasks.redis_state_check",
    } <= set(registered)  # fmt: skip
    assert app.amqp.router.route({}, "metering.tasks.stripe_meter_push")["queue"].name == "stripe"
    assert app.amqp.router.route({}, "metering.tasks.usage_ingest")["queue"].name == "metering"
