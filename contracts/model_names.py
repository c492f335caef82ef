"""Model names people send, resolved to catalog slugs (docs/gateway.md, "Model names").

Pure and Django-free: the gateway builds one :class:`NameIndex` per catalog snapshot and
resolves each request's ``model`` with dict lookups; the family rule runs only on a miss.

Order of resolution (first hit wins):

1. the catalog slug itself, then any listed name case-insensitively: explicit ``aliases``,
   the offerings' ``upstream_model`` ids, their dateless forms, dashed forms of dotted slugs,
   ``author/slug`` and ``<family>-latest``;
2. the canonical form of the name (lower case, no ``[1m]``-style suffix, no ``vendor/``
   prefix, no date suffix, dots as dashes) against the canonical forms of those names;
3. the same family and the same version in another word order (``claude-3-5-haiku-20241022``
   is ``claude-haiku-3.5``): still the model that was asked for;
4. the family rule, **only when the caller opted in** (``family_fallback``, a key or tenant
   setting): the name's family words (its non-numeric tokens) name a family of the catalog,
   or a shorter prefix of them does; the newest model of that family answers. Without the
   opt-in such a name (an unknown version of a known family: ``claude-opus-99-99``,
   ``gpt-9-imaginary``) resolves to nothing, and ``suggest`` names its family first.

"Newest" is the highest version parsed from the slug (``claude-opus-4.1`` is 4.1,
``claude-3-5-sonnet`` is 3.5), ties broken by the later position in the catalog's models list.
A name that two models claim at the same tier is ambiguous and dropped, except an explicit
alias, which goes to the newest model that declares it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

_SUFFIX_RE = re.compile(r"\[[^\]]*\]$")  # Claude Code's "[1m]" context marker
_DATE_RE = re.compile(r"[-@](?:\d{8}|\d{4}-\d{2}-\d{2}|\d{6})(?:-v\d+(?::\d+)?)?$")  # also Bedrock's -v1:0
_VERSION_RE = re.compile(r"^\d+(?:\.\d+)*$")
_WORD_VERSION_RE = re.compile(r"^([a-z]+)(\d+(?:\.\d+)*)$")  # v3.2, k2, qwen3
_LATEST = "latest"
SUGGESTIONS = 3  # closest names an unknown model's 404 offers
SUGGESTION_CUTOFF = 0.55  # difflib ratio below which a name is not worth suggesting


@dataclass(frozen=True, slots=True)
class ModelNames:
    """What the index needs of one catalog model."""

    slug: str
    upstream_ids: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()  # explicit, from the catalog file
    author: str = ""


@dataclass(frozen=True, slots=True)
class Resolution:
    model: str  # the catalog slug that routes and bills
    asked: str  # what the caller sent
    kind: str  # "slug" | "alias" | "family"

    @property
    def reason(self) -> str:
        """For ``x-tokenway-route``: empty for a slug, else ``alias:asked->model``."""
        return "" if self.kind == "slug" else f"{self.kind}:{self.asked}->{self.model}"


def undated(name: str) -> str:
    return _DATE_RE.sub("", name)


def canonical(name: str) -> str:
    text = _SUFFIX_RE.sub("", name.strip().lower())
    text = text.rsplit("/", 1)[-1]
    return undated(text).replace(".", "-").replace("_", "-")


def family_of(name: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """Family words and version of a name: ``claude-opus-4-1`` -> (("claude", "opus"), (4, 1))."""
    words: list[str] = []
    version: list[int] = []
    for token in undated(_SUFFIX_RE.sub("", name.strip().lower()).rsplit("/", 1)[-1]).split("-"):
        glued = _WORD_VERSION_RE.match(token)
        if _VERSION_RE.match(token):
            version.extend(int(part) for part in token.split("."))
        elif glued:
            words.append(glued.group(1))
            version.extend(int(part) for part in glued.group(2).split("."))
        elif token and token != _LATEST:
            words.append(token)
    return tuple(words), tuple(version)


def derived_names(model: ModelNames) -> list[str]:
    """Names listed for a model besides its explicit aliases: upstream ids (dated and not),
    the dashed form of a dotted slug, and ``author/slug``."""
    names = [*model.upstream_ids, *(undated(u) for u in model.upstream_ids), model.slug.replace(".", "-")]
    if model.author:
        names.append(f"{model.author}/{model.slug}")
    return names


@dataclass
class _Table:
    """name -> slug at one tier; a name two models claim is ambiguous and kept out."""

    names: dict[str, str] = field(default_factory=dict)
    ambiguous: set[str] = field(default_factory=set)

    def add(self, name: str, slug: str) -> None:
        if name in self.ambiguous or self.names.get(name, slug) == slug:
            if name not in self.ambiguous:
                self.names[name] = slug
            return
        del self.names[name]
        self.ambiguous.add(name)


class NameIndex:
    """Every name a catalog answers to, built once per snapshot."""

    def __init__(self, models: Sequence[ModelNames]) -> None:
        self._rank = {m.slug: (family_of(m.slug)[1], i) for i, m in enumerate(models)}
        self.families = self._families(models)
        self.listed: dict[str, list[str]] = {m.slug: [] for m in models}  # slug -> names shown in /v1/models
        self.official: dict[str, str] = {}  # provider ids without a vendor prefix -> slug: own /v1/models entries
        self._exact: dict[str, str] = {}
        self._canon: dict[str, str] = {}
        self._versions = self._versioned(models)
        for tier in self._tiers(models):
            self._merge(tier)
        upstream = {name for m in models for u in m.upstream_ids for name in (u.lower(), undated(u.lower()))}
        self.official = {name: slug for name, slug in self._exact.items() if name in upstream and "/" not in name}
        self.official = {name: slug for name, slug in self.official.items() if name != slug}

    def newest(self, slugs: Iterable[str]) -> str:
        return max(slugs, key=lambda slug: (*self._rank[slug], slug))

    def _families(self, models: Sequence[ModelNames]) -> dict[tuple[str, ...], str]:
        members: dict[tuple[str, ...], list[str]] = {}
        for model in models:
            words, _ = family_of(model.slug)
            if words:
                members.setdefault(words, []).append(model.slug)
        return {words: self.newest(slugs) for words, slugs in members.items()}

    @staticmethod
    def _versioned(models: Sequence[ModelNames]) -> dict[tuple[tuple[str, ...], tuple[int, ...]], str]:
        """(family words, version) -> slug, for slugs with a version; two models alike: neither."""
        table: dict[tuple[tuple[str, ...], tuple[int, ...]], str] = {}
        ambiguous: set[tuple[tuple[str, ...], tuple[int, ...]]] = set()
        for model in models:
            key = family_of(model.slug)
            if not key[0] or not key[1] or key in ambiguous:
                continue
            if table.setdefault(key, model.slug) != model.slug:
                del table[key]
                ambiguous.add(key)
        return table

    def _tiers(self, models: Sequence[ModelNames]) -> list[list[tuple[str, str]]]:
        claimed: dict[str, list[str]] = {}
        for model in models:
            for alias in model.aliases:
                claimed.setdefault(alias, []).append(model.slug)
        explicit = [(alias, self.newest(slugs)) for alias, slugs in claimed.items()]
        latest = [(f"{'-'.join(words)}-{_LATEST}", slug) for words, slug in self.families.items() if _nameable(words)]
        derived = [(name, m.slug) for m in models for name in derived_names(m)]
        return [[(m.slug, m.slug) for m in models], explicit, derived, latest]

    def _merge(self, pairs: list[tuple[str, str]]) -> None:
        exact, canon = _Table(), _Table()
        spelled: dict[str, str] = {}  # folded -> first spelling, for the listing
        for name, slug in pairs:
            exact.add(name.lower(), slug)
            canon.add(canonical(name), slug)
            spelled.setdefault(name.lower(), name)
        for name, slug in exact.names.items():
            if name not in self._exact:
                self._exact[name] = slug
                if name != slug.lower():
                    self.listed[slug].append(spelled[name])
        for name, slug in canon.names.items():
            self._canon.setdefault(name, slug)

    def resolve(self, asked: str, *, family_fallback: bool = False) -> Resolution | None:
        """The catalog model ``asked`` names; the family rule only with ``family_fallback``."""
        slug = (
            self._exact.get(asked.lower()) or self._canon.get(canonical(asked)) or self._versions.get(family_of(asked))
        )
        if slug is not None:
            return Resolution(slug, asked, "slug" if slug == asked else "alias")
        if not family_fallback:
            return None
        slug = self.family_match(asked)
        return None if slug is None else Resolution(slug, asked, "family")

    def family_match(self, asked: str) -> str | None:
        """The newest model of the family ``asked`` belongs to (or of a shorter prefix of its family words)."""
        words, _ = family_of(asked)
        for size in range(len(words), 0, -1):
            slug = self.families.get(words[:size])
            if slug is not None:
                return slug
        return None

    def suggest(self, asked: str) -> list[str]:
        """For an unknown model's 404: the newest model of its family first (an unknown version of a
        known family), then the closest slugs and listed names."""
        family = self.family_match(asked)
        choices = [*self._rank, *(name for names in self.listed.values() for name in names)]
        close = difflib.get_close_matches(asked.lower(), choices, n=SUGGESTIONS, cutoff=SUGGESTION_CUTOFF)
        return list(dict.fromkeys([*([family] if family else []), *close]))[:SUGGESTIONS]


def _nameable(words: tuple[str, ...]) -> bool:
    """``claude-sonnet-latest`` is a name people send; ``deepseek-v-latest`` is not."""
    return len(words) >= 2 and all(len(word) >= 3 for word in words)


def resolution_in_reason(route_reason: str) -> tuple[str, str] | None:
    """(kind, the name the caller sent) read back from a route reason that starts with a resolution's
    ``alias:asked->model;`` or ``family:asked->model;`` (``Resolution.reason``); None for a slug.
    The routing part after it never contains ``->``, so the last arrow ends the asked name."""
    kind, colon, rest = route_reason.partition(":")
    if kind not in ("alias", "family") or not colon:
        return None
    asked, arrow, _ = rest.rpartition("->")
    return (kind, asked) if arrow else None
