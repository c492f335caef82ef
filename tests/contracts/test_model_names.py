"""Model names people send (contracts.model_names): aliases, official ids, the version match in
another word order, and the family rule (only for callers that opted in)."""

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
    ModelNames("claude-3.5-haiku", ("claude-3-5-haiku-20241022",), (), "anthropic"),
    ModelNames("gpt-4.1", ("gpt-4.1",), (), "openai"),
    ModelNames("gpt-5", ("gpt-5", "openai/gpt-5"), (), "openai"),
    ModelNames("gpt-5-mini", ("gpt-5-mini",), (), "openai"),
    ModelNames("deepseek-v3.2", ("deepseek-chat", "deepseek-ai/DeepSeek-V3.2"), (), "deepseek"),
    ModelNames("kimi-k2", ("kimi-k2-0905-preview", "shared-id"), (), "moonshot"),
    ModelNames("glm-4.6", ("shared-id",), (), "zhipu"),
)
INDEX = NameIndex(CATALOG)


def _model(name: str, *, family_fallback: bool = False) -> tuple[str, str] | None:
    found = INDEX.resolve(name, family_fallback=family_fallback)
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
        ("claude-3-5-haiku-20241022", "claude-3.5-haiku", "alias"),  # Claude Code's older small model
        # What real clients send by default: Claude Code (main, opus, small/fast), the OpenAI SDK's dated
        # snapshots, OpenRouter-style vendor/model ids.
        ("claude-sonnet-4-20250514", "claude-sonnet-4", "alias"),
        ("claude-opus-4-1-20250805", "claude-opus-4.1", "alias"),
        ("claude-haiku-4-5-20251001", "claude-haiku-4.5", "alias"),
        ("opus", "claude-opus-4.1", "alias"),
        ("haiku", "claude-haiku-4.5", "alias"),
        ("gpt-5-2025-08-07", "gpt-5", "alias"),
        ("gpt-4.1", "gpt-4.1", "slug"),
        ("anthropic/claude-opus-4.1", "claude-opus-4.1", "alias"),
        ("claude-haiku-3-5", "claude-3.5-haiku", "alias"),  # same family and version, other word order
    ],
)
def test_names_resolve_to_catalog_models(asked, model, kind):
    assert _model(asked) == (model, kind)
    assert _model(asked, family_fallback=True) == (model, kind)  # the opt-in changes nothing for a known name


FAMILY = [
    ("claude-opus-4-8", "claude-opus-4.1"),  # newer than the catalog knows
    ("claude-opus-5-5", "claude-opus-4.1"),  # Claude Code 2.1.332's default
    ("claude-opus-99-99", "claude-opus-4.1"),
    ("claude-sonnet-5-x", "claude-sonnet-4.5"),
    ("claude-3-7-sonnet-20250219", "claude-sonnet-4.5"),  # the old word order, a version the catalog lacks
    ("gpt-6.2-sol", "gpt-5"),  # Codex CLI's default: newest GPT
    ("gpt-9-imaginary", "gpt-5"),
    ("gpt-6-mini", "gpt-5-mini"),
    ("openai/gpt-7", "gpt-5"),
]


@pytest.mark.parametrize(("asked", "newest"), FAMILY)
def test_an_unknown_version_of_a_known_family_resolves_to_nothing_and_suggests_the_family(asked, newest):
    assert INDEX.resolve(asked) is None
    assert INDEX.family_match(asked) == newest
    assert INDEX.suggest(asked)[0] == newest


@pytest.mark.parametrize(("asked", "newest"), FAMILY)
def test_with_family_fallback_the_newest_of_the_family_answers(asked, newest):
    assert _model(asked, family_fallback=True) == (newest, "family")


@pytest.mark.parametrize("asked", ["nonsense", "claude-foo-4", "shared-id", "", "gemini-2.5-pro", "4.5"])
def test_unknown_families_and_ambiguous_ids_resolve_to_nothing(asked):
    assert INDEX.resolve(asked, family_fallback=True) is None


def test_the_route_reason_names_the_alias_and_the_model():
    assert INDEX.resolve("sonnet").reason == "alias:sonnet->claude-sonnet-4.5"
    assert INDEX.resolve("claude-opus-4-8", family_fallback=True).reason == "family:claude-opus-4-8->claude-opus-4.1"


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
