"""Model names people send (contracts.model_names): aliases, official ids, the family rule."""

from __future__ import annotations

import pytest

from contracts.model_names import ModelNames, NameIndex, canonical, family_of
from contracts.snapshot import CatalogSnapshot, ModelSnapshot

CATALOG = (
    ModelNames("claude-sonnet-4", ("claude-sonnet-4-20250514",), (), "anthropic"),
    ModelNames(
        "claude-sonnet-4.5", ("claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4.5"), ("sonnet",), "anthropic"
    ),
    ModelNames("claude-opus-4.1", ("claude-opus-4-1-20250805",), ("opus",), "anthropic"),
    ModelNames("claude-haiku-4.5", ("claude-haiku-4-5-20251001",), ("haiku",), "anthropic"),
    ModelNames("gpt-4.1", ("gpt-4.1",), (), "openai"),
    ModelNames("gpt-5", ("gpt-5", "openai/gpt-5"), (), "openai"),
    ModelNames("gpt-5-mini", ("gpt-5-mini",), (), "openai"),
    ModelNames("deepseek-v3.2", ("deepseek-chat", "deepseek-ai/DeepSeek-V3.2"), (), "deepseek"),
    ModelNames("kimi-k2", ("kimi-k2-0905-preview", "shared-id"), (), "moonshot"),
    ModelNames("glm-4.6", ("shared-id",), (), "zhipu"),
)
INDEX = NameIndex(CATALOG)


def _model(name: str) -> tuple[str, str] | None:
    found = INDEX.resolve(name)
    return None if found is None else (found.model, found.kind)


@pytest.mark.parametrize(
    ("asked", "model", "kind"),
    [
        ("claude-sonnet-4.5", "claude-sonnet-4.5", "slug"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4.5", "alias"),  # official, dated
        ("claude-sonnet-4-5", "claude-sonnet-4.5", "alias"),  # official without date = dashed slug
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4.5", "alias"),  # Vertex spelling
        ("claude-sonnet-4-5-20250929[1m]", "claude-sonnet-4.5", "alias"),  # Claude Code's 1M-context marker
        ("Claude-Sonnet-4.5", "claude-sonnet-4.5", "alias"),
        ("sonnet", "claude-sonnet-4.5", "alias"),  # explicit
        ("claude-sonnet-latest", "claude-sonnet-4.5", "alias"),
        ("anthropic/claude-sonnet-4.5", "claude-sonnet-4.5", "alias"),  # vendor/model, OpenRouter style
        ("deepseek/deepseek-v3.2", "deepseek-v3.2", "alias"),
        ("openai/gpt-5-mini", "gpt-5-mini", "alias"),
        ("deepseek-chat", "deepseek-v3.2", "alias"),  # a provider's upstream id
        ("deepseek-ai/DeepSeek-V3.2", "deepseek-v3.2", "alias"),
        ("claude-opus-4-8", "claude-opus-4.1", "family"),  # newer than the catalog knows
        ("claude-opus-5-5", "claude-opus-4.1", "family"),  # Claude Code 2.1.332's default
        ("claude-sonnet-5-x", "claude-sonnet-4.5", "family"),
        ("claude-3-5-sonnet-20241022", "claude-sonnet-4.5", "family"),  # the old word order
        ("gpt-6.2-sol", "gpt-5", "family"),  # Codex CLI's default: newest GPT
        ("gpt-6-mini", "gpt-5-mini", "family"),
        ("openai/gpt-7", "gpt-5", "family"),
    ],
)
def test_names_resolve_to_catalog_models(asked, model, kind):
    assert _model(asked) == (model, kind)


@pytest.mark.parametrize("asked", ["nonsense", "claude-foo-4", "shared-id", "", "gemini-2.5-pro", "4.5"])
def test_unknown_families_and_ambiguous_ids_resolve_to_nothing(asked):
    assert INDEX.resolve(asked) is None


def test_the_route_reason_names_the_alias_and_the_model():
    assert INDEX.resolve("sonnet").reason == "alias:sonnet->claude-sonnet-4.5"
    assert INDEX.resolve("claude-opus-4-8").reason == "family:claude-opus-4-8->claude-opus-4.1"


def test_newest_is_the_highest_parsed_version_then_the_later_catalog_position():
    assert family_of("claude-opus-4-1-20250805") == (("claude", "opus"), (4, 1))
    assert family_of("claude-3-5-sonnet") == (("claude", "sonnet"), (3, 5))
    assert family_of("deepseek-v3.2") == (("deepseek", "v"), (3, 2))
    assert family_of("qwen3-coder-plus") == (("qwen", "coder", "plus"), (3,))
    assert INDEX.families[("claude", "sonnet")] == "claude-sonnet-4.5"
    assert INDEX.families[("gpt",)] == "gpt-5"
    tie = NameIndex((ModelNames("glm-air"), ModelNames("glm-air-x"), ModelNames("glm-air-b")))
    assert tie.newest(["glm-air", "glm-air-b"]) == "glm-air-b"


def test_an_explicit_alias_two_models_declare_goes_to_the_newest():
    index = NameIndex(
        (ModelNames("claude-sonnet-4.5", aliases=("sonnet",)), ModelNames("claude-sonnet-4", aliases=("sonnet",)))
    )
    assert index.resolve("sonnet").model == "claude-sonnet-4.5"


def test_a_slug_always_beats_an_alias_of_another_model():
    index = NameIndex((ModelNames("gpt-5", aliases=("gpt-5-mini",)), ModelNames("gpt-5-mini")))
    assert index.resolve("gpt-5-mini").model == "gpt-5-mini"


def test_listed_and_official_names():
    listed = INDEX.listed["claude-sonnet-4.5"]
    assert {"sonnet", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5", "anthropic/claude-sonnet-4.5"} <= set(listed)
    assert "claude-sonnet-latest" in listed and "claude-sonnet-latest" not in INDEX.listed["claude-sonnet-4"]
    assert INDEX.official["claude-sonnet-4-5-20250929"] == "claude-sonnet-4.5"
    assert "anthropic/claude-sonnet-4.5" not in INDEX.official and "shared-id" not in INDEX.official
    assert "gpt-5" not in INDEX.official  # the slug itself is no extra entry


def test_suggestions_come_from_slugs_and_aliases():
    assert INDEX.suggest("claude-sonet-4.5")[0] == "claude-sonnet-4.5"
    assert "sonnet" in INDEX.suggest("sonet")
    assert INDEX.suggest("zzzzzz") == []


def test_canonical_form():
    assert canonical(" Anthropic/Claude-Sonnet-4.5 ") == "claude-sonnet-4-5"
    assert canonical("claude-opus-4-1-20250805-v1:0") == "claude-opus-4-1"  # Bedrock
    assert canonical("gpt-4o-2024-08-06") == "gpt-4o"


def test_snapshot_carries_models_and_reads_documents_without_them():
    models = (ModelSnapshot("claude-sonnet-4.5", "anthropic", ("sonnet",)), ModelSnapshot("gpt-5"))
    snapshot = CatalogSnapshot(version=2, generated_at=1.0, offerings=(), models=models)
    assert CatalogSnapshot.from_json(snapshot.to_json()) == snapshot
    older = b'{"version": 1, "generated_at": 1.0, "offerings": [], "schema": 1}'
    assert CatalogSnapshot.from_json(older).models == ()
    assert list(ModelSnapshot.__dataclass_fields__) == ["slug", "author", "aliases"]
