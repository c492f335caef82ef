"""Lint a tree with import-linter and this repository's contracts: the tree itself, or a tree of
empty stub packages a test fills with the imports it wants to see caught."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint(cwd: Path, pythonpath: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": pythonpath}
    return subprocess.run([str(LINT_IMPORTS)], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def empty_packages(tmp_path: Path) -> None:
    """Every root package of the contracts, empty, with this tree's pyproject.toml."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    for package in config["root_packages"]:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "tokenway" / "asgi.py").write_text("import frontend.ws_urls\n")  # the one allowed import
    (tmp_path / "frontend" / "ws_urls.py").write_text("")
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())


def broken(stdout: str) -> int:
    return int(stdout.rsplit("kept, ", 1)[1].split(" broken", 1)[0])
