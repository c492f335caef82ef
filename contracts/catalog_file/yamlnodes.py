"""YAML to plain values, remembering the source line of every value (for line-precise errors)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml


class YamlError(ValueError):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


@dataclass(frozen=True)
class Located:
    """A value with the 1-based line it starts on; mappings and lists hold Located children."""

    value: Any
    line: int


def _convert(loader: yaml.SafeLoader, node: yaml.Node) -> Located:
    line = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        items: dict[str, Located] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                raise YamlError(key_node.start_mark.line + 1, f"mapping keys must be strings, got {key!r}")
            if key in items:
                raise YamlError(key_node.start_mark.line + 1, f"duplicate key {key!r}")
            items[key] = _convert(loader, value_node)
        return Located(items, line)
    if isinstance(node, yaml.SequenceNode):
        return Located([_convert(loader, item) for item in node.value], line)
    return Located(loader.construct_object(node, deep=True), line)


def load_located(text: str) -> Located:
    """Parse one YAML document; syntax errors carry the line where they were found."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return Located(None, 1)
        return _convert(loader, node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise YamlError(mark.line + 1 if mark else 1, str(exc.problem or exc)) from None
    except yaml.YAMLError as exc:
        raise YamlError(1, str(exc)) from None
    finally:
        loader.dispose()
