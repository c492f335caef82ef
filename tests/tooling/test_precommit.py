"""The pre-commit hooks run the same commands as CI's lint and typecheck stages, with the project's own tools."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
STAGES = ("lint", "typecheck")  # the `make` targets .ci/run runs as its lint and typecheck stages


def recipe(target: str) -> list[str]:
    """The command lines of one Makefile target."""
    lines = (ROOT / "Makefile").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    body = []
    for line in lines[start + 1 :]:
        if not line.startswith("\t"):
            break
        body.append(line.strip().lstrip("@"))
    return body


def commands(line: str) -> list[str]:
    """Each command of a recipe line, with the Makefile's variables spelled as the hooks spell them."""
    line = line.replace("$(VENV)/bin/", ".venv/bin/").replace("$(PY)", ".venv/bin/python")
    parts = re.split(r"\s*(?:&&|\|\|)\s*", line)
    return [" ".join(shlex.split(part.split(">", 1)[0])) for part in parts]


def ci_commands() -> set[str]:
    return {command for target in STAGES for line in recipe(target) for command in commands(line)}


def hooks() -> list[dict[str, object]]:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    return [hook for repo in config["repos"] for hook in repo["hooks"]]


def hook_command(hook: dict[str, object]) -> str:
    words = shlex.split(str(hook["entry"]))
    if words[:2] == ["env", "PYTHONPATH=.:platform"]:
        words = words[2:]
    return " ".join(words)


def test_ci_runs_the_lint_and_typecheck_targets() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    for target in STAGES:
        assert f"stage {target} make --no-print-directory {target}" in ci


def test_the_hooks_run_exactly_the_commands_of_ci_lint_and_typecheck() -> None:
    assert ci_commands() >= {".venv/bin/ruff check .", ".venv/bin/ruff format --check .", ".venv/bin/mypy ."}
    assert sorted(hook_command(hook) for hook in hooks()) == sorted(ci_commands())


def test_every_hook_is_local_and_uses_the_project_venv() -> None:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    assert [repo["repo"] for repo in config["repos"]] == ["local"]
    for hook in hooks():
        assert {"id", "name", "entry", "language"} <= hook.keys()
        assert hook["language"] == "system"
        assert hook["pass_filenames"] is False  # whole-tree checks, as in CI
        assert hook_command(hook).startswith(".venv/bin/")
