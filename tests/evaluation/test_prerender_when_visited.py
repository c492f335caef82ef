"""A statistics publish pre-renders the leaderboard's default views only while someone reads the board: eight
pages every 30 s cost about a second of CPU each time (bench.probing_cost), which a board nobody reads wastes."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from contracts import redis_keys
from evaluation.services.refresh import BOARD_PRERENDER_TASK, stats_refresh
from foundation.redis_client import get_broker_redis

pytestmark = [pytest.mark.django_db]


def _prerenders_queued(broker) -> int:
    messages = (json.loads(raw) for raw in broker.lrange("default", 0, -1))
    return sum(1 for message in messages if message["headers"]["task"] == BOARD_PRERENDER_TASK)


def test_a_publish_prerenders_the_board_only_after_a_visitor_read_it(redis_client):
    from tokenway.celery import app  # the project's app, as in the worker that publishes

    assert app.conf.broker_url
    broker = get_broker_redis()
    before = _prerenders_queued(broker)
    stats_refresh()
    assert _prerenders_queued(broker) == before  # nobody has looked: nothing rendered
    assert Client().get("/").status_code == 200
    assert redis_client.ttl(redis_keys.BOARD_VISITED) > 0  # for the board cache's lifetime, then it lapses
    stats_refresh()
    assert _prerenders_queued(broker) == before + 1
