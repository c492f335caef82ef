"""Celery tasks of the frontend: thin wrappers over plain functions."""

from __future__ import annotations

from celery import shared_task

from frontend.prerender import board_prerender


@shared_task(name="frontend.board_prerender", ignore_result=True, expires=60)
def board_prerender_task() -> int:
    """Enqueued by evaluation's statistics publish (by name: evaluation does not import the frontend)."""
    return board_prerender()
