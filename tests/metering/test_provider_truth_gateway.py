"""Provider truth through the real gateway, the simulated fleet, Redis and PostgreSQL.

OpenRouter reports its own cost (``usage.cost``); the fleet here bills minimax-m2 through OpenRouter at 1.3x
its published price (qwen3-max stays honest). The reported cost is booked as provider cost with ours beside
it; reconciliation finds the drift; the stats snapshot carries it to the gateway as an integrity flag; the
provider's usage export (built from what the fleet says it billed) imports and reconciles per day and
offering, moving the books to the invoice.
"""

from __future__ import annotations

import csv
import datetime as dt
import time
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import openai
import pytest
import redis
import requests
import yaml
from django.core.management import CommandError, call_command

from catalog.models import Offering
from contracts.usage import Tokens, cost_micros
from evaluation.services.snapshot import build_snapshot, snapshot_publish
from metering.consumer import UsageConsumer
from metering.models import AccountKind, JournalLine, UsageRecord
from metering.reconcile import check_provider_cost_drift, check_provider_invoices
from metering.services import balance_topup, tenant_available_ensure
from publishing.catalog_snapshot import publish_catalog
from sim.server import SimHandle, start_in_thread
from tests.catalogs import apply_catalog_file
from tests.factories import issue_key
from tests.routing import harness
from tests.routing.conftest import TIME_SCALE, calm_profiles
from tests.routing.harness import ServerThread
from tests.waiting import wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.cluster]

ROOT = Path(__file__).resolve().parents[2]
OVERBILLED, HONEST = "minimax-m2", "qwen3-max"
FACTOR = 1.3


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimHandle]:
    folder = tmp_path_factory.mktemp("sim-overbilling")
    path = calm_profiles(folder)
    profiles = yaml.safe_load(path.read_text())
    openrouter = profiles["providers"]["openrouter"]
    openrouter.setdefault("offerings", {})[OVERBILLED] = {"dishonesty": {"billed_price_factor": FACTOR}}
    path.write_text(yaml.safe_dump(profiles))
    handle = start_in_thread(seed=13, time_scale=TIME_SCALE, profiles=path)
    yield handle
    handle.stop()


@pytest.fixture(scope="module")
def gateway_thread(fleet: SimHandle) -> Iterator[ServerThread]:
    from routing.app import make_gateway_app

    server = ServerThread(make_gateway_app(harness.test_config()))
    yield server
    server.stop()


@pytest.fixture
def gateway(gateway_thread: ServerThread, fleet: SimHandle, redis_client: redis.Redis) -> ServerThread:
    """The demo catalog in the database (offering ids as the platform has them), published to the gateway."""
    apply_catalog_file(ROOT / "demo" / "catalog.yaml", sim_base_url=fleet.base_url)
    version = publish_catalog()
    wait_until(
        lambda: gateway_thread.gateway.catalog.catalog and gateway_thread.gateway.catalog.catalog.version == version,
        timeout=5,
        message="the gateway sees the catalog",
    )
    requests.post(f"{fleet.base_url}/_sim/reset", timeout=5)
    return gateway_thread


def _client(gateway: ServerThread, tenant: Any) -> openai.OpenAI:
    balance_topup(tenant=tenant, amount_micros=50_000_000, idempotency_key="topup:truth", source="promotion")
    tenant_available_ensure(tenant=tenant)
    _key, plaintext = issue_key(tenant)
    return openai.OpenAI(base_url=f"{gateway.base_url}/v1", api_key=plaintext, max_retries=0, timeout=20)


def _ask(client: openai.OpenAI, model: str, *, stream: bool) -> str:
    body: dict[str, Any] = {"provider": {"only": ["openrouter"]}}
    messages: Any = [{"role": "user", "content": f"Say something about invoices ({model}, {stream})."}]
    if not stream:
        raw = client.chat.completions.with_raw_response.create(model=model, messages=messages, extra_body=body)
        return raw.headers["x-request-id"]
    streamed = client.chat.completions.with_raw_response.create(
        model=model, messages=messages, stream=True, stream_options={"include_usage": True}, extra_body=body
    )
    for _ in streamed.parse():
        pass
    return streamed.headers["x-request-id"]


def _ingest(redis_client: redis.Redis, expected: int) -> None:
    consumer = UsageConsumer(client=redis_client, name="truth-test", after_batch=lambda _: None)
    wait_until(
        lambda: (
            consumer.run(until=time.monotonic() + 0.2, block_ms=50) >= 0 and UsageRecord.objects.count() >= expected
        ),
        timeout=10,
        message=f"{expected} usage records",
    )


def _offering_id(model: str) -> int:
    return Offering.objects.get(provider__slug="openrouter", model__slug=model).pk


def test_reported_cost_is_booked_beside_ours_and_drift_is_found_and_flagged(gateway, fleet, tenant, redis_client):
    client = _client(gateway, tenant)
    asked = {_ask(client, OVERBILLED, stream=False): OVERBILLED, _ask(client, OVERBILLED, stream=True): OVERBILLED,
             _ask(client, HONEST, stream=False): HONEST, _ask(client, HONEST, stream=True): HONEST}  # fmt: skip
    _ingest(redis_client, len(asked))
    for rid, model in asked.items():
        row = UsageRecord.objects.get(request_id=rid)
        assert row.provider == "openrouter" and row.reported_cost_micros is not None
        tokens = Tokens(
            row.input_uncached, row.cache_read, row.cache_write_5m, row.cache_write_1h, row.output, row.reasoning
        )
        assert row.computed_cost_micros == cost_micros(tokens, row_prices(row)) > 0
        assert row.cost_micros == row.reported_cost_micros  # the provider's own figure is what we owe
        booked = JournalLine.objects.get(journal__key=f"usage:{rid}", account__kind=AccountKind.PROVIDER_COST)
        assert booked.amount_micros == row.reported_cost_micros
        if model == HONEST:
            assert row.reported_cost_micros == row.computed_cost_micros
        else:
            assert row.reported_cost_micros == pytest.approx(row.computed_cost_micros * FACTOR, rel=0.02, abs=2)
    [drift] = check_provider_cost_drift()
    assert (drift.check, drift.subject) == ("provider_cost_drift", f"offering:{_offering_id(OVERBILLED)}")
    assert drift.detail["ratio"] == pytest.approx(FACTOR, rel=0.02)

    version = snapshot_publish(client=redis_client, snapshot=build_snapshot())
    catalog = gateway.gateway.catalog
    wait_until(
        lambda: catalog.stats is not None and catalog.stats.version == version,
        timeout=5,
        message="the gateway reads the stats snapshot",
    )
    overbilled = catalog.by_id[_offering_id(OVERBILLED)]
    estimate = catalog.estimate(overbilled)
    assert "price_mismatch" in estimate.flags and estimate.last_resort
    assert estimate.price_factor > 1.2  # the router expects to pay what it is billed
    assert not catalog.estimate(catalog.by_id[_offering_id(HONEST)]).last_resort


def row_prices(row: UsageRecord) -> Any:
    from contracts.usage import Prices

    assert isinstance(row.prices, dict)
    return Prices(**row.prices)


def _export(fleet: SimHandle) -> str:
    """The provider's usage export: a row per request, what it billed and the tokens it reported."""
    out = StringIO()
    writer = csv.writer(out)
    writer.writerow(["date", "model", "input_tokens", "cache_read_tokens", "output_tokens", "amount_usd"])
    today = dt.datetime.now(dt.UTC).date().isoformat()
    response = requests.get(f"{fleet.base_url}/_sim/requests?provider=openrouter&limit=50", timeout=5)
    for entry in response.json()["requests"]:
        usage, billed = entry["sim"]["reported_usage"], entry["sim"]["billed_cost_micros"]
        writer.writerow([today, entry["json"]["model"], usage["input_total"], usage["cache_read"], usage["output"],
                         f"{billed / 1_000_000:.6f}"])  # fmt: skip
    return out.getvalue()


def test_usage_export_imports_reconciles_per_day_and_offering_and_moves_the_books(
    gateway, fleet, tenant, redis_client, tmp_path
):
    client = _client(gateway, tenant)
    for model in (OVERBILLED, OVERBILLED, HONEST):
        _ask(client, model, stream=False)
    _ingest(redis_client, 3)
    path = tmp_path / "openrouter-export.csv"
    path.write_text(_export(fleet))
    out = StringIO()
    with pytest.raises(CommandError, match="1 line"):
        call_command("import_provider_invoice", str(path), "--provider", "openrouter", stdout=out)
    table = out.getvalue()
    assert "over-billed" in table and "minimax/minimax-m2" in table, table
    honest_line = next(line for line in table.splitlines() if line.split("\t")[1:2] == ["qwen/qwen3-max"])
    assert honest_line.endswith("\tok")
    findings = check_provider_invoices()
    assert [(f.check, f.subject.split(":")[1]) for f in findings] == [
        ("provider_invoice_drift", str(_offering_id(OVERBILLED)))
    ]
    # The usage journals already booked what the provider reported per request: the invoice agrees, nothing moves.
    assert not JournalLine.objects.filter(journal__kind="provider_invoice").exists()
    # A revised export billing 10% more for the honest model books the difference, once.
    revised = tmp_path / "revised.csv"
    rows = list(csv.reader(StringIO(_export(fleet))))
    for row in rows[1:]:
        if row[1] == "qwen/qwen3-max":
            extra = round(float(row[-1]) * 1.1, 6)
            row[-1] = f"{extra:.6f}"
    revised.write_text("\n".join(",".join(row) for row in rows) + "\n")
    for _ in range(2):
        with pytest.raises(CommandError):
            call_command("import_provider_invoice", str(revised), "--provider", "openrouter", stdout=StringIO())
    [adjustment] = JournalLine.objects.filter(journal__kind="provider_invoice", account__kind=AccountKind.PROVIDER_COST)
    honest = UsageRecord.objects.get(model=HONEST)
    assert adjustment.amount_micros == pytest.approx(honest.cost_micros * 0.1, abs=2)
