"""The product's import graph at module level, read from the source with ``ast``: every import, at a
module's top or inside a function body alike (a function-local import is still a dependency: it only runs
later), except those under ``if TYPE_CHECKING:`` (never run). import-linter's contracts see the same
imports but only check the shapes they are told about; this graph is for finding any cycle at all."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("contracts", "routing", "sim", "metering", "evaluation", "frontend")
PLATFORM = ROOT / "platform"  # the Django apps and the project package, each a top-level package


@dataclass(frozen=True, slots=True)
class Import:
    source: str  # the importing module
    target: str  # the imported module (the longest known module the imported name starts with)
    line: int
    local: bool  # inside a function body


def product_modules() -> dict[str, Path]:
    """Module name -> file, for every package of the product (``platform/*`` too)."""
    roots = [ROOT / name for name in PRODUCT] + sorted(p for p in PLATFORM.iterdir() if (p / "__init__.py").exists())
    modules: dict[str, Path] = {}
    for root in roots:
        for path in root.rglob("*.py"):
            parts = path.relative_to(root.parent).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            modules[name] = path
    return modules


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _raw_imports(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple[str, int, bool]]:
    """(dotted name imported, line, inside a function) for every import that can run."""

    def walk(node: ast.AST, local: bool) -> Iterator[tuple[str, int, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for other in child.orelse:
                    yield from visit(other, local)
                continue
            yield from visit(child, local)

    def visit(node: ast.AST, local: bool) -> Iterator[tuple[str, int, bool]]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, local
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".") if is_package else module.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, base] if base else package)
            for alias in node.names:
                yield f"{base}.{alias.name}", node.lineno, local
        elif isinstance(node, ast.If) and _is_type_checking(node):
            yield from walk(ast.Module(body=node.orelse, type_ignores=[]), local)
        else:
            function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            yield from walk(node, local or function)

    yield from walk(tree, False)


def product_imports(modules: dict[str, Path] | None = None) -> list[Import]:
    """Every import from one product module of another (imports of outside packages are left out)."""
    modules = product_modules() if modules is None else modules
    found: list[Import] = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        for name, line, local in _raw_imports(tree, module, path.name == "__init__.py"):
            target = name
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != module:
                found.append(Import(module, target, line, local))
    return found


def all_imports(path: Path, module: str) -> list[tuple[str, int, bool]]:
    """Every import of one file, outside packages included."""
    return list(_raw_imports(ast.parse(path.read_text()), module, path.name == "__init__.py"))


def cycles(imports: list[Import]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    graph: dict[str, set[str]] = {}
    for edge in imports:
        graph.setdefault(edge.source, set()).add(edge.target)
        graph.setdefault(edge.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))
    return found


def describe(component: frozenset[str], imports: list[Import]) -> str:
    """The cycle's modules and the imports that close it, one per line (``a -> b (l.12, in a function)``)."""
    lines = [f"{len(component)} modules: {', '.join(sorted(component))}"]
    for edge in sorted(set(imports), key=lambda e: (e.source, e.target, e.line)):
        if edge.source in component and edge.target in component:
            where = ", in a function" if edge.local else ""
            lines.append(f"  {edge.source} -> {edge.target} (l.{edge.line}{where})")
    return "\n".join(lines)
