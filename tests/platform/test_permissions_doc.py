from __future__ import annotations

from pathlib import Path

from tenants.models import Role
from tenants.permissions import MATRIX, Action

DOC = Path(__file__).resolve().parents[2] / "docs" / "permissions.md"
ROLES = ["owner", "admin", "developer", "billing", "viewer"]


def _doc_table() -> dict[str, frozenset[str]]:
    rows = {}
    for line in DOC.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and "." in cells[0] and not cells[0].startswith("-"):
            rows[cells[0]] = frozenset(role for role, mark in zip(ROLES, cells[1:], strict=True) if mark == "✓")
    return rows


def test_doc_matrix_matches_the_code_table():
    assert _doc_table() == {action.value: frozenset(str(r) for r in roles) for action, roles in MATRIX.items()}


def test_every_action_has_a_row_and_roles_are_known():
    assert set(MATRIX) == set(Action)
    assert {str(r) for roles in MATRIX.values() for r in roles} <= {str(r) for r in Role}
