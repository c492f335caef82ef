from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from catalog.models import Model, Offering, OfferingPrice, Provider
from contracts import redis_keys
from contracts.catalog_file import CatalogInvalid, parse_catalog
from contracts.snapshot import CatalogSnapshot

FIXTURES = Path(__file__).parent / "fixtures"
SMALL = (FIXTURES / "small.yaml").read_text()


def _load(path: Path) -> str:
    out = StringIO()
    call_command("load_catalog", str(path), stdout=out)
    return out.getvalue()


def _errors(text: str) -> list[str]:
    with pytest.raises(CatalogInvalid) as info:
        parse_catalog(text, filename="demo.yaml", sim_base_url="http://sim")
    return info.value.messages


def test_valid_file_loads_with_defaults_and_substitution():
    spec = parse_catalog(SMALL, filename="small.yaml", sim_base_url="http://sim:1")
    assert spec.providers["deepseek"]["base_url"] == "http://sim:1/deepseek/v1"
    offering = spec.offerings[("deepseek-v3.2", "siliconflow")]
    assert offering["context_window"] == 65536
    assert offering["max_output"] == 8192  # from the model
    assert offering["prices"]["cache_write_5m"] == 0


@pytest.mark.django_db(transaction=True)
def test_load_is_idempotent_and_prints_the_diff(tmp_path, redis_client):
    first = _load(FIXTURES / "small.yaml")
    assert "+ provider deepseek" in first
    assert "+ offering deepseek-v3.2@deepseek" in first
    assert "added 8, changed 0, removed 0" in first
    assert _load(FIXTURES / "small.yaml").strip() == "no changes"
    assert OfferingPrice.objects.count() == 3


@pytest.mark.django_db(transaction=True)
def test_price_change_adds_a_version_and_removal_disables(tmp_path, redis_client):
    _load(FIXTURES / "small.yaml")
    changed = SMALL.replace("input: 280000", "input: 300000")
    changed = changed[: changed.index("  - model: claude-sonnet-4.5\n    provider: anthropic")]
    path = tmp_path / "changed.yaml"
    path.write_text(changed)
    out = _load(path)
    assert "price v1 -> v2 (input 280000 -> 300000)" in out
    assert "- offering claude-sonnet-4.5@anthropic (disabled)" in out
    offering = Offering.objects.get(model__slug="deepseek-v3.2", provider__slug="deepseek")
    assert list(offering.prices.values_list("version", "input")) == [(2, 300000), (1, 280000)]
    snapshot = CatalogSnapshot.from_json(redis_client.get(redis_keys.CATALOG_SNAPSHOT))
    assert snapshot.version == int(redis_client.get(redis_keys.CATALOG_VERSION))
    by_key = {(o.model, o.provider): o for o in snapshot.offerings}
    assert by_key[("deepseek-v3.2", "deepseek")].prices.input == 300000
    assert by_key[("deepseek-v3.2", "deepseek")].prices.version == 2
    assert by_key[("claude-sonnet-4.5", "anthropic")].status == "disabled"


def test_wrong_price_type_reports_the_exact_line():
    text = SMALL.replace("      input: 270000", "      input: -5")
    line = text.splitlines().index("      input: -5") + 1
    assert _errors(text) == [f"demo.yaml:{line}: offerings[1].prices.input must be a non-negative integer"]


def test_unknown_references_fields_and_missing_keys_are_all_reported():
    text = SMALL.replace("provider: siliconflow", "provider: nowhere").replace(
        "    rpm: 600", "    rpm: 600\n    colour: red"
    )
    text = text.replace("    name: DeepSeek V3.2\n", "")
    lines = text.splitlines()
    messages = _errors(text)
    assert (
        f"demo.yaml:{lines.index('    provider: nowhere') + 1}: offerings[1].provider names unknown provider 'nowhere'"
        in messages
    )
    assert f"demo.yaml:{lines.index('    colour: red') + 1}: offerings[0].colour is not a known field" in messages
    assert f"demo.yaml:{lines.index('  - slug: deepseek-v3.2') + 1}: models[0].name is required" in messages


def test_syntax_error_and_duplicate_key_carry_lines():
    assert _errors("version: 1\nproviders: [\n")[0].startswith("demo.yaml:3:")
    assert _errors("version: 1\nversion: 1\n") == ["demo.yaml:2: duplicate key 'version'"]
    assert _errors("version: 2\n") == ["demo.yaml:1: version must be 1"]


def test_booleans_are_not_integers():
    text = SMALL.replace("cache_ttl_s: 300", "cache_ttl_s: true")
    assert any("providers[0].cache_ttl_s must be a non-negative integer" in m for m in _errors(text))


@pytest.mark.django_db
def test_invalid_file_changes_nothing(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text(SMALL.replace("dialect: anthropic\n", "dialect: grpc\n"))
    with pytest.raises(CommandError, match=r"broken.yaml:\d+: providers\[2\].dialect must be one of openai, anthropic"):
        _load(path)
    assert Provider.objects.count() == Model.objects.count() == 0


DEMO = Path(__file__).resolve().parents[2] / "demo" / "catalog.yaml"


@pytest.mark.skipif(not DEMO.exists(), reason="demo/catalog.yaml not written yet")
@pytest.mark.django_db(transaction=True)
def test_demo_catalog_loads_twice_without_changes(redis_client):
    assert "added" in _load(DEMO)
    assert _load(DEMO).strip() == "no changes"
    snapshot = CatalogSnapshot.from_json(redis_client.get(redis_keys.CATALOG_SNAPSHOT))
    assert len(snapshot.offerings) >= 40


def _with_aliases(aliases: str) -> str:
    anchor = "    name: DeepSeek V3.2\n"
    return SMALL.replace(anchor, f"{anchor}    aliases: {aliases}\n")


def test_model_aliases_are_parsed_in_order_without_duplicates():
    spec = parse_catalog(_with_aliases("[deepseek-chat, ds, deepseek-chat]"), filename="a.yaml", sim_base_url="x")
    assert spec.models["deepseek-v3.2"]["aliases"] == ["deepseek-chat", "ds"]
    assert spec.models["claude-sonnet-4.5"]["aliases"] == []


def test_alias_that_names_a_slug_or_is_malformed_is_reported_with_its_line():
    text = _with_aliases("[claude-sonnet-4.5, 'bad name']")
    line = text.splitlines().index("    aliases: [claude-sonnet-4.5, 'bad name']") + 1
    assert sorted(_errors(text)) == [
        f"demo.yaml:{line}: models[0].aliases[1] must be a model name of [A-Za-z0-9._:/-]",
        f"demo.yaml:{line}: models[deepseek-v3.2].aliases names the model slug 'claude-sonnet-4.5'",
    ]
    assert _errors(_with_aliases("sonnet")) == [f"demo.yaml:{line}: models[0].aliases must be a list"]


@pytest.mark.django_db(transaction=True)
def test_aliases_are_stored_and_carried_in_the_snapshot(tmp_path, redis_client):
    path = tmp_path / "aliased.yaml"
    path.write_text(_with_aliases("[ds]"))
    assert "+ model deepseek-v3.2" in _load(path)
    assert Model.objects.get(slug="deepseek-v3.2").aliases == ["ds"]
    path.write_text(_with_aliases("[ds, deepseek]"))
    assert "model deepseek-v3.2: aliases" in _load(path)
    snapshot = CatalogSnapshot.from_json(redis_client.get(redis_keys.CATALOG_SNAPSHOT))
    models = {m.slug: m for m in snapshot.models}
    assert models["deepseek-v3.2"].aliases == ("ds", "deepseek")
    assert models["deepseek-v3.2"].author == "deepseek"
    assert [m.slug for m in snapshot.models] == list(
        parse_catalog(path.read_text(), filename="a", sim_base_url="").models
    )
