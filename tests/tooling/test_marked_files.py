"""The second runs collect only the files that apply their marker (devtools/marked_files.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from devtools.marked_files import ROOT, marked_files

CLUSTER, LOCAL = "cluster", "local_servers"  # kept out of this file's text, which the suite's scan reads too
MODULE_MARK = f"import pytest\npytestmark = [pytest.mark.{CLUSTER}]\ndef test_a(): pass\n"
PARAM_MARK = (
    f"import pytest\n@pytest.mark.parametrize('x', [pytest.param(1, marks=pytest.mark.{LOCAL})])\ndef test_b(x): pass\n"
)
NO_MARK = "import pytest\n@pytest.mark.clustered\ndef test_c(): pass\n"


def test_a_marker_applied_to_a_module_or_a_parameter_is_found_and_a_longer_name_is_not(tmp_path: Path):
    tests = tmp_path / "tests"
    (tests / "routing").mkdir(parents=True)
    (tests / "routing" / "test_module.py").write_text(MODULE_MARK)
    (tests / "test_param.py").write_text(PARAM_MARK)
    (tests / "test_other.py").write_text(NO_MARK)
    assert marked_files(CLUSTER, tests) == ("tests/routing/test_module.py",)
    assert marked_files(LOCAL, tests) == ("tests/test_param.py",)


def test_the_command_prints_the_suites_files_for_make():
    printed = subprocess.run(
        [sys.executable, "-m", "devtools.marked_files", CLUSTER], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert printed == list(marked_files(CLUSTER))
    assert "tests/metering/test_holds.py" in printed and "tests/tooling/test_marked_files.py" not in printed
