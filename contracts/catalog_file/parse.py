"""Read a catalog file into validated plain data (providers, models, offerings by key).

Django-free: the platform's loader (catalog.services) and the simulated fleet (sim.fleet_spec) read
the same file through this one function, with the same line-precise errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contracts.catalog_file.schema import (
    MODEL_FIELDS,
    MODEL_SLUG_RE,
    OFFERING_FIELDS,
    PARAMETERS,
    PRICE_FIELDS,
    PROVIDER_FIELDS,
    Errors,
    check_mapping,
)
from contracts.catalog_file.yamlnodes import Located, YamlError, load_located

CATALOG_FORMAT_VERSION = 1
TOP_LEVEL = ("version", "providers", "models", "offerings")


class CatalogInvalid(ValueError):
    def __init__(self, messages: list[str]) -> None:
        super().__init__("\n".join(messages))
        self.messages = messages


@dataclass
class CatalogSpec:
    providers: dict[str, dict[str, Any]] = field(default_factory=dict)
    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    offerings: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (model, provider)


def _items(root: dict[str, Located], name: str, errors: Errors) -> list[Located]:
    node = root.get(name)
    if node is None:
        return []
    if not isinstance(node.value, list):
        errors.add(node.line, name, "must be a list")
        return []
    return list(node.value)


def _parameters(node: Any, path: str, errors: Errors) -> list[str]:
    if not isinstance(node, Located):
        return list(node)
    if not isinstance(node.value, list):
        errors.add(node.line, path, "must be a list")
        return []
    for index, item in enumerate(node.value):
        if item.value not in PARAMETERS:
            errors.add(item.line, f"{path}[{index}]", f"must be one of {', '.join(PARAMETERS)}")
    return sorted({item.value for item in node.value if isinstance(item.value, str)})


def _aliases(node: Any, path: str, errors: Errors) -> list[Located]:
    """Other names of a model (docs/catalog-format.md), each with its line; syntax checked here."""
    if not isinstance(node, Located) or not isinstance(node.value, list):
        return []  # absent, or already reported by check_mapping
    valid = []
    for index, item in enumerate(node.value):
        if isinstance(item.value, str) and MODEL_SLUG_RE.match(item.value):
            valid.append(item)
        else:
            errors.add(item.line, f"{path}[{index}]", "must be a model name of [A-Za-z0-9._:/-]")
    return valid


def _check_aliases(spec: CatalogSpec, located: dict[str, list[Located]], errors: Errors) -> None:
    """An alias never shadows a slug (the slug would win and the alias would silently do nothing)."""
    for slug, items in located.items():
        for item in items:
            if item.value in spec.models:
                errors.add(item.line, f"models[{slug}].aliases", f"names the model slug {item.value!r}")
        spec.models[slug]["aliases"] = list(dict.fromkeys(i.value for i in items if i.value not in spec.models))


def _substitute(value: Any, sim_base_url: str | None) -> Any:
    if isinstance(value, str) and sim_base_url is not None:
        return value.replace("${SIM_BASE_URL}", sim_base_url)
    return value


def _providers(root: dict[str, Located], spec: CatalogSpec, errors: Errors, sim_base_url: str | None) -> None:
    for index, node in enumerate(_items(root, "providers", errors)):
        path = f"providers[{index}]"
        data = check_mapping(node, PROVIDER_FIELDS, path, errors)
        if data is None or not isinstance(data["slug"], str):
            continue
        if data["slug"] in spec.providers:
            errors.add(node.line, f"{path}.slug", f"duplicates provider {data['slug']!r}")
        data["base_url"] = _substitute(data["base_url"], sim_base_url)
        spec.providers[data["slug"]] = data


def _models(root: dict[str, Located], spec: CatalogSpec, errors: Errors) -> None:
    located: dict[str, list[Located]] = {}
    for index, node in enumerate(_items(root, "models", errors)):
        path = f"models[{index}]"
        data = check_mapping(node, MODEL_FIELDS, path, errors)
        if data is None or not isinstance(data["slug"], str):
            continue
        if data["slug"] in spec.models:
            errors.add(node.line, f"{path}.slug", f"duplicates model {data['slug']!r}")
        data["quality"] = float(data["quality"]) if isinstance(data["quality"], int | float) else 0.5
        located[data["slug"]] = _aliases(data["aliases"], f"{path}.aliases", errors)
        spec.models[data["slug"]] = data
    _check_aliases(spec, located, errors)


def _offering(node: Located, path: str, spec: CatalogSpec, errors: Errors, sim_base_url: str | None) -> None:
    data = check_mapping(node, OFFERING_FIELDS, path, errors)
    if data is None:
        return
    model, provider = data["model"], data["provider"]
    model_node, provider_node = node.value.get("model"), node.value.get("provider")
    if model_node is not None and isinstance(model, str) and model not in spec.models:
        errors.add(model_node.line, f"{path}.model", f"names unknown model {model!r}")
    if provider_node is not None and isinstance(provider, str) and provider not in spec.providers:
        errors.add(provider_node.line, f"{path}.provider", f"names unknown provider {provider!r}")
    prices = data["prices"]
    data["prices"] = check_mapping(prices, PRICE_FIELDS, f"{path}.prices", errors) if prices else None
    data["parameters"] = _parameters(data["parameters"], f"{path}.parameters", errors)
    data["base_url"] = _substitute(data["base_url"], sim_base_url)
    if (model, provider) in spec.offerings:
        errors.add(node.line, path, f"duplicates offering {model}@{provider}")
    model_data = spec.models.get(model) if isinstance(model, str) else None
    if model_data:
        data["upstream_model"] = data["upstream_model"] or model
        data["context_window"] = data["context_window"] or model_data["context_window"]
        data["max_output"] = data["max_output"] or model_data["max_output"]
        if data["max_reasoning_tokens"] is None:
            data["max_reasoning_tokens"] = model_data["max_reasoning_tokens"]
    spec.offerings[(str(model), str(provider))] = data


def parse_catalog(text: str, *, filename: str, sim_base_url: str | None = None) -> CatalogSpec:
    """Validate the whole file; every error names ``filename:line``. ``${SIM_BASE_URL}`` in base URLs
    becomes ``sim_base_url`` (left as written when None)."""
    errors = Errors(filename)
    try:
        root = load_located(text)
    except YamlError as exc:
        raise CatalogInvalid([f"{filename}:{exc.line}: {exc.message}"]) from None
    if not isinstance(root.value, dict):
        raise CatalogInvalid([f"{filename}:{root.line}: the catalog must be a mapping"])
    for key, child in root.value.items():
        if key not in TOP_LEVEL:
            errors.add(child.line, key, "is not a known top-level section")
    version = root.value.get("version")
    if version is None or version.value != CATALOG_FORMAT_VERSION:
        errors.add(version.line if version else 1, "version", f"must be {CATALOG_FORMAT_VERSION}")
    spec = CatalogSpec()
    _providers(root.value, spec, errors, sim_base_url)
    _models(root.value, spec, errors)
    for index, node in enumerate(_items(root.value, "offerings", errors)):
        _offering(node, f"offerings[{index}]", spec, errors, sim_base_url)
    if errors.messages:
        raise CatalogInvalid(errors.messages)
    return spec


# Offering fields that default to the provider's value when the offering leaves them out (None).
PROVIDER_OVERRIDABLE = (
    "base_url",
    "dialect",
    "usage_dialect",
    "cached_tokens_in_input",
    "cache_policy",
    "cache_ttl_s",
    "keeps_billing_block",
)


def effective_offering(spec: CatalogSpec, key: tuple[str, str]) -> dict[str, Any]:
    """The offering ``(model, provider)`` with every field it leaves out taken from its provider."""
    offering = spec.offerings[key]
    provider = spec.providers[offering["provider"]]
    merged = {name: provider[name] if offering[name] is None else offering[name] for name in PROVIDER_OVERRIDABLE}
    return {**offering, **merged}
