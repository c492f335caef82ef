"""Conventions kept by a check, not by habit (`python -m devtools.conventions`, run by `make lint`).

- ``# fmt: skip`` only where a table reads better: their count may not pass the ceiling in
  devtools/conventions.toml, and once it is well below, the check asks for the ceiling to come down.
- No fixed sleeps in tests: ``time.sleep`` / ``asyncio.sleep`` of a constant (a number or an UPPER_CASE name)
  outside the places the allow-list names, each with its reason. Wait on the condition (``tests.waiting``).
- No direct environment reads in product code: ``os.environ`` / ``os.getenv`` only in the env reader
  (``contracts.env``) and entry points; the rest read through it. The allow-list names what is left.

Allow-lists name places (``path::function``), not lines, and may only shrink: an entry that no longer
matches anything fails the check until it is removed.
"""

from __future__ import annotations

import ast
import os
import sys
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CONFIG = Path("devtools/conventions.toml")
FMT_SKIP = "# fmt: skip"
FMT_OFF = "# fmt: off"
SKIP_DIRS = frozenset({".git", ".venv", "node_modules", ".data", ".tools", "__pycache__", "migrations", "staticfiles"})
PRODUCT = ("contracts", "routing", "sim", "metering", "evaluation", "frontend", "platform")
TESTS = ("tests",)
# The env reader (contracts.env, re-exported by the platform's tokenway.env) and the entry points, which set up
# the process (argument defaults, DJANGO_SETTINGS_MODULE) before anything else runs.
ENV_READERS = frozenset({"contracts/env.py", "platform/foundation/env.py"})
ENTRY_POINTS = frozenset({"__main__.py", "manage.py", "asgi.py", "wsgi.py", "celery.py"})
SLEEPS = frozenset({"time.sleep", "asyncio.sleep", "anyio.sleep", "trio.sleep"})
ENV_NAMES = frozenset({"os.environ", "os.environb", "os.getenv", "os.getenvb"})


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    place: str  # path::function, what an allow-list names
    what: str


def python_files(root: Path, folders: Iterable[str]) -> Iterator[Path]:
    for folder in folders:
        base = root / folder
        if base.is_file():
            yield base
            continue
        for folder_path, folders, files in os.walk(base):
            folders[:] = sorted(name for name in folders if name not in SKIP_DIRS)
            yield from (Path(folder_path) / name for name in sorted(files) if name.endswith(".py"))


class _Visitor(ast.NodeVisitor):
    """Dotted names of the calls and attributes a module uses, resolved through its imports, by function."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.aliases: dict[str, str] = {}
        self.scope: list[str] = []
        self.uses: list[tuple[int, str, str]] = []  # line, place, dotted name

    def place(self) -> str:
        return f"{self.path}::{'.'.join(self.scope) or '<module>'}"

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                top = alias.name.split(".")[0]
                self.aliases[top] = top

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def dotted(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = self.dotted(node)
        if name:
            self.uses.append((node.lineno, self.place(), name))
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        name = self.aliases.get(node.id)
        if name and "." in name:  # a name imported from a module: `from os import environ`
            self.uses.append((node.lineno, self.place(), name))

    def visit_Call(self, node: ast.Call) -> None:
        name = self.dotted(node.func)
        if name in SLEEPS and node.args and _constant(node.args[0]) and not _zero(node.args[0]):
            self.uses.append((node.lineno, self.place(), f"{name}()"))
        self.generic_visit(node)


def _constant(node: ast.expr) -> bool:
    """A number, an UPPER_CASE name, or arithmetic of them: a wait fixed when the code was written."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float)
    if isinstance(node, ast.Name):
        return node.id.isupper()
    if isinstance(node, ast.Attribute):
        return node.attr.isupper()
    if isinstance(node, ast.UnaryOp):
        return _constant(node.operand)
    if isinstance(node, ast.BinOp):
        return _constant(node.left) and _constant(node.right)
    return False


def _zero(node: ast.expr) -> bool:
    """``sleep(0)`` yields to the event loop; it waits for nothing."""
    return isinstance(node, ast.Constant) and node.value == 0


def _uses(root: Path, path: Path, needles: tuple[str, ...]) -> list[tuple[int, str, str]]:
    """What the module uses, parsed only when its text names one of ``needles`` (most files do not)."""
    text = path.read_text(encoding="utf-8")
    if not any(needle in text for needle in needles):
        return []
    relative = path.relative_to(root).as_posix()
    visitor = _Visitor(relative)
    visitor.visit(ast.parse(text, filename=relative))
    return visitor.uses


def fixed_sleeps(root: Path) -> list[Finding]:
    found = []
    for path in python_files(root, TESTS):
        for line, place, name in _uses(root, path, ("sleep",)):
            if name.endswith("()"):
                found.append(Finding(place.split("::")[0], line, place, f"fixed {name[:-2]}"))
    return found


def env_reads(root: Path) -> list[Finding]:
    found = []
    for path in python_files(root, PRODUCT):
        relative = path.relative_to(root).as_posix()
        if relative in ENV_READERS or path.name in ENTRY_POINTS:
            continue
        seen = set()
        for line, place, name in _uses(root, path, ("environ", "getenv")):
            if name in ENV_NAMES and (line, name) not in seen:
                seen.add((line, name))
                found.append(Finding(relative, line, place, f"direct read of {name}"))
    return found


def fmt_skips(root: Path) -> int:
    """Lines the formatter is told to leave alone: ``# fmt: skip`` at their end, or ``# fmt: off``."""
    top = sorted(p.name for p in root.iterdir() if p.name not in SKIP_DIRS and (p.is_dir() or p.suffix == ".py"))
    return sum(
        line.rstrip().endswith(FMT_SKIP) or line.strip() == FMT_OFF
        for path in python_files(root, top)
        for line in path.read_text(encoding="utf-8").splitlines()
    )


def load_config(root: Path) -> dict[str, Any]:
    return tomllib.loads((root / CONFIG).read_text(encoding="utf-8"))


def _allowed(config: dict[str, Any], key: str) -> dict[str, str]:
    return {str(entry["place"]): str(entry["reason"]) for entry in config.get(key, [])}


def against_allow_list(found: list[Finding], allowed: dict[str, str], rule: str, advice: str) -> list[str]:
    errors = [
        f"{f.path}:{f.line}: {f.what} in {f.place.split('::')[1]} ({advice})" for f in found if f.place not in allowed
    ]
    used = {f.place for f in found}
    errors += [
        f"{CONFIG}: [[{rule}]] {place} matches nothing any more: remove it (the allow-list only shrinks)"
        for place in allowed
        if place not in used
    ]
    return errors


def fmt_skip_errors(count: int, config: dict[str, Any]) -> list[str]:
    section = config["fmt_skip"]
    ceiling, slack = int(section["ceiling"]), int(section["slack"])
    if count > ceiling:
        return [
            f"{count} '# fmt: skip' comments, above the ceiling of {ceiling} ({CONFIG}): let the formatter lay it "
            "out, keep the comment only where a table reads better"
        ]
    if count < ceiling - slack:
        return [f"{count} '# fmt: skip' comments, well below the ceiling of {ceiling}: lower it to {count} in {CONFIG}"]
    return []


def check(root: Path) -> tuple[list[str], str]:
    """The errors, and a one-line summary of what was counted."""
    config = load_config(root)
    skips, sleeps, reads = fmt_skips(root), fixed_sleeps(root), env_reads(root)
    errors = fmt_skip_errors(skips, config)
    errors += against_allow_list(
        sleeps, _allowed(config, "fixed_sleep"), "fixed_sleep", "wait on the condition with tests.waiting"
    )
    errors += against_allow_list(
        reads, _allowed(config, "env_read"), "env_read", "read it through contracts.env (env_str, env_int, ...)"
    )
    summary = (
        f"conventions: {skips} '# fmt: skip' (ceiling {config['fmt_skip']['ceiling']}), "
        f"{len(sleeps)} fixed sleeps in {len({f.place for f in sleeps})} allowed places, "
        f"{len(reads)} direct environment reads in {len({f.place for f in reads})} allowed places"
    )
    return errors, summary


def main(argv: list[str] | None = None) -> int:
    root = Path(argv[0]).resolve() if argv else ROOT
    errors, summary = check(root)
    for error in errors:
        print(error, file=sys.stderr)
    if errors:
        return 1
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
