"""Offline Stripe for ``make run``: localstripe (API + signed webhooks) and the meter-event emulator.

Used only when no ``STRIPE_API_KEY`` is configured, so the demo's top-ups and
postpaid meter events exercise the same code paths as production. Ports:
``STRIPE_PORT`` / ``STRIPE_METER_PORT``, else 8420 / 8421 when free, else any free port.
"""

from __future__ import annotations

import secrets
import sys
import urllib.parse
import urllib.request
from pathlib import Path

from contracts.env import env_int
from devtools.ports import free_port, port_is_free, wait_for_port
from devtools.supervisor import Child

STOP_STAGE = 5  # after everything that may still call Stripe


def _port(name: str, preferred: int) -> int:
    configured = env_int(name, 0)
    if configured:
        return configured
    return preferred if port_is_free(preferred) else free_port()


def _webhook_secret(data_dir: Path) -> str:
    path = data_dir / "stripe-webhook-secret"
    if not path.exists():
        path.write_text(f"whsec_{secrets.token_hex(24)}")
        path.chmod(0o600)
    return path.read_text().strip()


def offline_stripe(*, data_dir: Path) -> tuple[dict[str, str], list[Child]]:
    """The two servers to supervise and the env that points the platform at them."""
    api_port, meter_port = _port("STRIPE_PORT", 8420), _port("STRIPE_METER_PORT", 8421)
    children = [
        Child(
            "localstripe",
            [sys.executable, "-m", "fakes.localstripe_server", "--port", str(api_port)],
            stage=STOP_STAGE,
            stop_timeout=5,
        ),
        Child(
            "stripe-meter",
            [sys.executable, "-m", "fakes.stripe_meter", "--port", str(meter_port)],
            stage=STOP_STAGE,
            stop_timeout=5,
        ),
    ]
    env = {
        "STRIPE_API_KEY": "sk_test_offline_demo",
        "STRIPE_API_BASE": f"http://127.0.0.1:{api_port}",
        "STRIPE_METER_API_BASE": f"http://127.0.0.1:{meter_port}",
        "STRIPE_WEBHOOK_SECRET": _webhook_secret(data_dir),
        "STRIPE_PORT": str(api_port),
        "STRIPE_METER_PORT": str(meter_port),
    }
    return env, children


def register_webhook(env: dict[str, str], *, web_port: int) -> None:
    """Once both answer: localstripe signs and posts payment events to the web app."""
    wait_for_port(int(env["STRIPE_PORT"]), timeout=20)
    wait_for_port(int(env["STRIPE_METER_PORT"]), timeout=20)
    form = urllib.parse.urlencode(
        {
            "url": f"http://127.0.0.1:{web_port}/api/v1/stripe/webhook",
            "secret": env["STRIPE_WEBHOOK_SECRET"],
            "events[]": "payment_intent.succeeded",
        }
    ).encode()
    url = f"{env['STRIPE_API_BASE']}/_config/webhooks/tokenway"
    urllib.request.urlopen(url, data=form, timeout=5).close()  # noqa: S310 - loopback URL we built
