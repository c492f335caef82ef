"""The catalog's ``max_reasoning_tokens`` (docs/catalog-format.md): a model's reasoning beyond the caller's
max_tokens, overridable per offering, stored, and carried to the gateway in the catalog snapshot."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from catalog.models import Offering
from contracts import redis_keys
from contracts.catalog_file import CatalogInvalid, parse_catalog
from contracts.snapshot import CatalogSnapshot

SMALL = (Path(__file__).parent / "fixtures" / "small.yaml").read_text()
MODEL_ANCHOR = "    name: DeepSeek V3.2\n"
OFFERING_ANCHOR = "    upstream_model: deepseek-ai/DeepSeek-V3.2\n"


def _capped(model: str, offering: str = "") -> str:
    text = SMALL.replace(MODEL_ANCHOR, f"{MODEL_ANCHOR}    max_reasoning_tokens: {model}\n")
    return (
        text.replace(OFFERING_ANCHOR, f"{OFFERING_ANCHOR}    max_reasoning_tokens: {offering}\n") if offering else text
    )


def test_offerings_take_the_models_reasoning_cap_unless_they_set_their_own():
    spec = parse_catalog(_capped("32768", "4096"), filename="a.yaml", sim_base_url="x")
    assert spec.offerings[("deepseek-v3.2", "deepseek")]["max_reasoning_tokens"] == 32768
    assert spec.offerings[("deepseek-v3.2", "siliconflow")]["max_reasoning_tokens"] == 4096
    assert spec.offerings[("claude-sonnet-4.5", "anthropic")]["max_reasoning_tokens"] == 0  # default: within the cap


def test_a_negative_reasoning_cap_is_refused_with_its_line():
    text = _capped("-1")
    line = text.splitlines().index("    max_reasoning_tokens: -1") + 1
    with pytest.raises(CatalogInvalid) as info:
        parse_catalog(text, filename="a.yaml", sim_base_url="x")
    assert info.value.messages == [f"a.yaml:{line}: models[0].max_reasoning_tokens must be a non-negative integer"]


@pytest.mark.django_db(transaction=True)
def test_the_reasoning_cap_is_stored_and_carried_in_the_snapshot(tmp_path, redis_client):
    path = tmp_path / "capped.yaml"
    path.write_text(_capped("32768", "4096"))
    call_command("load_catalog", str(path), stdout=StringIO())
    stored = Offering.objects.get(model__slug="deepseek-v3.2", provider__slug="siliconflow")
    assert stored.max_reasoning_tokens == 4096
    snapshot = CatalogSnapshot.from_json(redis_client.get(redis_keys.CATALOG_SNAPSHOT))
    caps = {(o.model, o.provider): o.max_reasoning_tokens for o in snapshot.offerings}
    assert caps[("deepseek-v3.2", "deepseek")] == 32768 and caps[("deepseek-v3.2", "siliconflow")] == 4096
