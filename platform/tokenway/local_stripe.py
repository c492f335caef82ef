"""Offline Stripe for ``make run``: localstripe (API + signed webhooks) and the meter-event emulator.

Used only when no ``STRIPE_API_KEY`` is configured, so the demo's top-ups and
postpaid meter events exercise the same code paths as production.
"""

from __future__ import annotations

import secrets
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

from tokenway.env import env_int
from tokenway.ports import wait_for_port


def _webhook_secret(data_dir: Path) -> str:
    path = data_dir / "stripe-webhook-secret"
    if not path.exists():
        path.write_text(f"whsec_{secrets.token_hex(24)}")
        path.chmod(0o600)
    return path.read_text().strip()


def start_offline_stripe(
    *, data_dir: Path, web_port: int
) -> tuple[dict[str, str], list[tuple[str, subprocess.Popen[bytes]]]]:
    """Start both servers, register the webhook; return the env for the other processes."""
    api_port = env_int("STRIPE_PORT", 8420)
    meter_port = env_int("STRIPE_METER_PORT", 8421)
    processes = [
        (
            "localstripe",
            subprocess.Popen([sys.executable, "-m", "metering.localstripe_server", "--port", str(api_port)]),
        ),
        (
            "stripe-meter",
            subprocess.Popen([sys.executable, "-m", "metering.stripe_emulator", "--port", str(meter_port)]),
        ),
    ]
    wait_for_port(api_port, timeout=20)
    wait_for_port(meter_port, timeout=20)
    secret = _webhook_secret(data_dir)
    form = urllib.parse.urlencode(
        {
            "url": f"http://127.0.0.1:{web_port}/api/v1/stripe/webhook",
            "secret": secret,
            "events[]": "payment_intent.succeeded",
        }
    ).encode()
    urllib.request.urlopen(f"http://127.0.0.1:{api_port}/_config/webhooks/tokenway", data=form, timeout=5).close()
    env = {
        "STRIPE_API_KEY": "sk_test_offline_demo",
        "STRIPE_API_BASE": f"http://127.0.0.1:{api_port}",
        "STRIPE_METER_API_BASE": f"http://127.0.0.1:{meter_port}",
        "STRIPE_WEBHOOK_SECRET": secret,
    }
    return env, processes
