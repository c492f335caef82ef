"""A live ASGI server (uvicorn in a thread serving tokenway.asgi) and headless Debian Chromium.

The browser is /usr/bin/chromium from Debian (scripts/ensure-browser.sh installs it);
Playwright only drives it (never `playwright install`).
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import Client

from devtools.ports import free_port as _free_port
from devtools.ports import wait_for_port
from tests.waiting import poll_until

ROOT = Path(__file__).resolve().parents[3]
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def _ensure_chromium() -> str | None:
    """None when the browser is ready, else why it is not."""
    if Path(CHROMIUM).exists():
        return None
    script = ROOT / "scripts" / "ensure-browser.sh"
    result = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=900)
    if result.returncode != 0 or not Path(CHROMIUM).exists():
        return f"Debian chromium could not be installed by scripts/ensure-browser.sh: {result.stderr.strip()[-300:]}"
    return None


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    reason = _ensure_chromium()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop running in this thread; the ORM calls the tests
    # make meanwhile are still plain synchronous code, so Django's async guard is lifted here only.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield instance
            instance.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture(scope="session")
def live_url(django_db_setup, django_db_blocker) -> Iterator[str]:
    import uvicorn

    from tokenway.asgi import application

    port = _free_port()
    # The app exactly as deployed: its own middleware serves the collected, hashed assets (no test wrapper).
    # lifespan "on": the gateway (/v1/*) starts its Redis clients and catalog/key refreshers.
    config = uvicorn.Config(
        application,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="on",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    with django_db_blocker.unblock():
        thread.start()
        poll_until(lambda: server.started, timeout=20, interval=0.05)
        yield f"http://127.0.0.1:{port}"
        server.should_exit = True
        thread.join(timeout=10)


def login_cookie(user: object, live_url: str) -> dict[str, str]:
    """A session cookie for the user, without depending on the login page's markup."""
    client = Client()
    client.force_login(user)  # type: ignore[arg-type]
    return {"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_url}


@pytest.fixture
def page(browser, live_url, transactional_db, redis_client):
    context = browser.new_context(base_url=live_url, viewport={"width": 1280, "height": 900}, locale="en-US")
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.js_errors = errors
    yield pg
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def shot(page: object, name: str, *, full: bool = True) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=full)  # type: ignore[attr-defined]


def group_send(group: str, message: dict[str, object]) -> None:
    """Channels group_send from a plain thread (Playwright's loop occupies the test's thread)."""
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    errors: list[BaseException] = []

    def run() -> None:
        try:
            async_to_sync(get_channel_layer().group_send)(group, message)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread below
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=10)
    if errors:
        raise errors[0]


SIM_TIME_SCALE = 0.005  # sim seconds -> real: a 700 ms TTFT takes 3.5 ms, a stream well under a second
STRIPE_WEBHOOK_SECRET = "whsec_test_frontend"


@pytest.fixture(scope="session")
def sim_fleet() -> Iterator[object]:
    from sim.server import start_in_thread

    with start_in_thread(seed=7, time_scale=SIM_TIME_SCALE) as handle:
        yield handle


@pytest.fixture(scope="session")
def localstripe_url(live_url) -> Iterator[str]:
    """localstripe (Stripe's API on loopback) whose signed webhooks reach the live server."""
    import sys

    import requests

    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "fakes.localstripe_server", "--port", str(port), "--from-scratch"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_port(port, timeout=15)
        hook = {
            "url": f"{live_url}/api/v1/stripe/webhook",
            "secret": STRIPE_WEBHOOK_SECRET,
            "events[]": ["payment_intent.succeeded", "payment_intent.payment_failed"],
        }
        requests.post(f"{base}/_config/webhooks/tokenway", data=hook, timeout=5).raise_for_status()
        yield base
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def stripe_offline(localstripe_url, settings) -> Iterator[str]:
    """Point metering's Stripe client at localstripe (test key) for this test."""
    from metering.stripe.client import clients_reset

    settings.STRIPE_API_BASE = localstripe_url
    settings.STRIPE_API_KEY = "sk_test_frontend"
    settings.STRIPE_WEBHOOK_SECRET = STRIPE_WEBHOOK_SECRET
    clients_reset()
    yield localstripe_url
    clients_reset()


@pytest.fixture
def demo_catalog(sim_fleet, transactional_db, redis_client, settings) -> None:
    """demo/catalog.yaml with ``${SIM_BASE_URL}`` -> the in-process fleet, published for the gateway."""
    from publishing.catalog_snapshot import publish_catalog
    from tests.catalogs import apply_catalog_file

    settings.SIM_BASE_URL = sim_fleet.base_url
    apply_catalog_file(ROOT / "demo" / "catalog.yaml", sim_base_url=sim_fleet.base_url)
    publish_catalog()


@pytest.fixture
def usage_consumer(transactional_db, redis_client) -> Iterator[None]:
    """The metering consumer (what ``manage.py consume_usage`` runs) in a thread of this process."""
    from django.db import connection

    from foundation.redis_client import get_redis
    from metering.consumer import UsageConsumer

    stop = threading.Event()
    failures: list[BaseException] = []

    def run() -> None:
        worker = UsageConsumer(client=get_redis(), name="e2e")
        try:
            while not stop.is_set():
                worker.run(until=time.monotonic() + 0.3, block_ms=100)
        except BaseException as exc:  # noqa: BLE001 - reported in the test's thread below
            failures.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    yield
    stop.set()
    thread.join(timeout=10)
    assert not failures, f"usage consumer failed: {failures[0]!r}"
