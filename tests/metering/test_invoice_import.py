"""``manage.py import_provider_invoice``: the CSV read strictly (a bad file imports nothing and names its line),
rows summed per day and model, unknown models booked and reported, a re-import booking nothing twice."""

from __future__ import annotations

import datetime as dt
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from metering.models import AccountKind, Balance, JournalLine, ProviderInvoiceLine
from metering.provider_invoices import InvoiceError, invoice_parse
from metering.reconcile import check_provider_invoices
from tests.factories import ProviderFactory

pytestmark = pytest.mark.django_db(transaction=True)


def _import(tmp_path: Path, text: str, provider: str = "acme") -> tuple[str, CommandError | None]:
    path = tmp_path / "export.csv"
    path.write_text(text)
    out = StringIO()
    try:
        call_command("import_provider_invoice", str(path), "--provider", provider, stdout=out)
    except CommandError as exc:
        return out.getvalue(), exc
    return out.getvalue(), None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("date,model\n2026-11-29,m\n", "header: missing column(s) amount_usd"),
        ("date,model,amount_usd\n2026-11-29,m,1.5\n2026-11-29,m,lots\n", "line 3: amount 'lots' is not a number"),
        ("date,model,amount_usd\n2026-11-29,m,-1\n", "line 2: amount '-1' must be a non-negative"),
        ("date,model,amount_usd\n29/11/2026,m,1\n", "line 2: date '29/11/2026' is not YYYY-MM-DD"),
        ("date,model,amount_usd,output_tokens\n2026-11-29,m,1,1e3\n", "line 2: output_tokens '1e3' is not"),
        ("date,model,amount_usd\n2026-11-29,,1\n", "line 2: model must be 1-200 characters"),
    ],
)
def test_a_malformed_file_imports_nothing_and_names_the_line(tmp_path, text, message):
    _out, error = _import(tmp_path, text)
    assert error is not None and error.returncode == 2 and message in str(error) and "nothing imported" in str(error)
    assert not ProviderInvoiceLine.objects.exists() and not JournalLine.objects.exists()


def test_rows_of_a_day_and_model_are_summed_and_timestamps_fall_on_their_utc_day():
    lines = invoice_parse(
        "Date,Model,Input_Tokens,Output_Tokens,Amount_USD,ignored\n"
        "2026-11-29T23:30:00-02:00,m,100,10,0.000100,x\n"  # 01:30 UTC on the 30th
        "2026-11-30T08:00:00Z,m,50,5,0.0000505,y\n"
        "2026-11-30,other,1,1,0.25,z\n"
    )
    by_key = {(str(line.day), line.model): line for line in lines}
    assert set(by_key) == {("2026-11-30", "m"), ("2026-11-30", "other")}
    assert by_key[("2026-11-30", "m")].amount_micros == 151  # 100 + 50.5 rounded half up
    assert by_key[("2026-11-30", "m")].tokens["input_tokens"] == 150
    with pytest.raises(InvoiceError):
        invoice_parse("")


def test_a_provider_not_in_our_catalog_is_refused_and_nothing_is_imported(tmp_path):
    _out, error = _import(tmp_path, "date,model,amount_usd\n2026-11-29,m,2.50\n", provider="acmee")
    assert error is not None and error.returncode == 2 and "provider 'acmee' is not in our catalog" in str(error)
    assert not ProviderInvoiceLine.objects.exists() and not JournalLine.objects.exists()


def test_a_model_not_in_our_catalog_is_booked_reported_and_never_booked_twice(tmp_path, redis_client):
    ProviderFactory(slug="acme")
    today = dt.datetime.now(dt.UTC).date()
    text = f"date,model,amount_usd\n{today},mystery-model,2.50\n"
    for _ in range(2):
        out, error = _import(tmp_path, text)
        assert error is None, out
        assert "mystery-model\t-\t0\t2500000\t0\t0\t-\tnot in our catalog" in out
    cost = Balance.objects.get(account__tenant__isnull=True, account__kind=AccountKind.PROVIDER_COST)
    assert cost.amount_micros == 2_500_000  # owed once, however often the file is imported
    findings = [f for f in check_provider_invoices() if f.check == "invoice_line_unmatched"]
    assert [f.subject for f in findings] == [f"acme:{today}:mystery-model"]


def test_an_invoice_counting_more_tokens_than_were_reported_reaches_the_router_as_token_overcount(tenant, redis_client):
    from evaluation.services.snapshot import build_snapshot
    from metering.ingest import usage_ingest
    from tests.metering.conftest import make_event

    event = make_event(tenant.pk)  # 2,000 input and 300 output tokens, offering 7
    usage_ingest(events=[event])
    day = dt.datetime.fromtimestamp(event.finished_at, tz=dt.UTC).date()
    ProviderInvoiceLine.objects.create(
        provider="deepseek",
        day=day,
        model="deepseek-v4-flash",
        offering_id=7,
        input_tokens=2_400,
        output_tokens=360,
        amount_micros=event.cost_micros,
        imported_at=dt.datetime.now(dt.UTC),
    )
    stats = build_snapshot().stats["all"]["7"]
    assert stats.flags == ("token_overcount",) and stats.overcount_factor == pytest.approx(1.2)
    assert stats.billed_ratio is None  # the amount matches our computation: no over-billing
    assert [f.check for f in check_provider_invoices()] == ["provider_invoice_tokens_over"]
