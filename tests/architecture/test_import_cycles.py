"""No import cycle anywhere in the product, function-local imports included (tests/architecture/import_graph.py).

A function-local import hides a cycle from a reader and from Python's start-up order, not from the design:
the 15-module cycle through the gateway's metrics stood behind one. There is none left, and none may come back.
"""

from __future__ import annotations

from pathlib import Path

from tests.architecture.import_graph import all_imports, cycles, describe, product_imports, product_modules

# Function-local imports the gateway keeps: only of optional heavy dependencies, each imported when used.
GATEWAY_LOCAL_IMPORTS: dict[tuple[str, str], str] = {
    ("routing.__main__", "granian"): "only the server chosen by --server is imported (granian is optional)",
    ("routing.__main__", "uvicorn"): "only the server chosen by --server is imported",
    ("routing.telemetry.tracing", "opentelemetry"): "OpenTelemetry loads only once a call is traced (traces off)",
    ("routing.telemetry.propagation", "opentelemetry"): "as tracing: loaded with the first traced attempt",
    ("routing.forwarding.attempt_span", "opentelemetry"): "as tracing: loaded with the first traced attempt",
}


def _report(found: list[frozenset[str]]) -> str:
    imports = product_imports()
    return "\n\n".join(describe(component, imports) for component in found)


def test_the_product_has_no_import_cycle():
    found = cycles(product_imports())
    assert not found, "import cycles (cut them, do not hide them in a function body):\n" + _report(found)


def test_the_gateway_imports_inside_functions_only_optional_heavy_dependencies():
    local = {
        (module, name.split(".")[0])
        for module, path in product_modules().items()
        if module.split(".")[0] == "routing"
        for name, _line, inside in all_imports(path, module)
        if inside
    }
    assert local <= set(GATEWAY_LOCAL_IMPORTS), sorted(local - set(GATEWAY_LOCAL_IMPORTS))
    assert not any(name == "routing" for _module, name in local)


def test_a_cycle_hidden_in_a_function_body_is_found_and_a_type_checking_import_is_not(tmp_path: Path):
    (tmp_path / "a.py").write_text("import routing.b\n")
    (tmp_path / "b.py").write_text("def late() -> None:\n    from routing.a import thing\n")
    (tmp_path / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import routing.a\n")
    (tmp_path / "d.py").write_text("import routing.c\n")
    modules = {f"routing.{name}": tmp_path / f"{name}.py" for name in "abcd"}
    imports = product_imports(modules)
    found = cycles(imports)
    assert found == [frozenset({"routing.a", "routing.b"})]
    report = describe(found[0], imports)
    assert "routing.a -> routing.b (l.1)" in report
    assert "routing.b -> routing.a (l.2, in a function)" in report
