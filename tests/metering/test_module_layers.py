"""metering's internal layer contract (pyproject.toml): a cycle through the balance services breaks the build.

The cycle it replaces ran services -> live -> ingest -> shortfall -> services, hidden by imports inside
function bodies. Each test lints a small tree of stub modules with this repository's contracts.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.architecture.import_lint import broken, empty_packages, lint

# The chain money moves down today, each module importing the next at its top.
DOWNWARD = {
    "services": "from metering.console_push import tenant_push\n",
    "console_push": "from metering.ingest import IngestResult\n",
    "ingest": "from metering.shortfall import usage_journals_clamp\n",
    "shortfall": "from metering.available import tenant_available_adjust\n",
    "available": "from metering.holds import holds_open_micros\nfrom metering.ledger import tenant_account_balance\n",
    "holds": "",
    "ledger": "",
}


def _tree(tmp_path: Path) -> Path:
    """Every root package of the contracts, empty, with this tree's pyproject.toml and the metering chain."""
    empty_packages(tmp_path)
    for module, source in DOWNWARD.items():
        (tmp_path / "metering" / f"{module}.py").write_text(source)
    return tmp_path


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    return lint(tree, str(tree))


def test_the_chain_downwards_keeps_every_contract(tmp_path):
    result = _lint(_tree(tmp_path))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert broken(result.stdout) == 0


def test_the_old_cycle_hidden_in_a_function_body_breaks_the_build(tmp_path):
    tree = _tree(tmp_path)
    (tree / "metering" / "shortfall.py").write_text(
        "def _counter_return() -> None:\n    from metering.services import tenant_available_adjust\n"
    )
    result = _lint(tree)
    assert result.returncode == 1
    assert "metering.shortfall is not allowed to import metering.services" in result.stdout
    assert "metering.shortfall -> metering.services (l.2)" in result.stdout
    assert broken(result.stdout) == 1


def test_the_avail_counter_reaching_up_to_the_consoles_breaks_the_build(tmp_path):
    tree = _tree(tmp_path)
    (tree / "metering" / "available.py").write_text("import metering.console_push\n")
    result = _lint(tree)
    assert result.returncode == 1
    assert "metering.available -> metering.console_push (l.1)" in result.stdout
    assert broken(result.stdout) == 1


def test_a_metering_module_without_a_place_in_the_layers_breaks_the_build(tmp_path):
    tree = _tree(tmp_path)
    (tree / "metering" / "credits_extra.py").write_text("import metering.ledger\n")
    result = _lint(tree)
    assert result.returncode == 1
    assert "- metering.credits_extra" in result.stdout
    assert "every child of every container" in result.stdout.replace("\n", " ")
    assert broken(result.stdout) == 1
