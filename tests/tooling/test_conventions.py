"""The conventions check (devtools.conventions, in `make lint`) catches what the house rules forbid, on this tree
and on small trees a test writes with one violation each."""

from __future__ import annotations

import textwrap
import tomllib
from pathlib import Path

from devtools import conventions

ROOT = Path(__file__).resolve().parents[2]
CONFIG = """
[fmt_skip]
ceiling = 2
slack = 1
"""


def tree(tmp_path: Path, files: dict[str, str], config: str = CONFIG) -> Path:
    for name, text in {"devtools/conventions.toml": config, **files}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def errors(root: Path) -> list[str]:
    return conventions.check(root)[0]


SKIPS = {"bench/table.py": "A = [1, 2]  # fmt: skip\nB = [3, 4]  # fmt: skip\n"}


def test_this_tree_keeps_its_conventions(capsys):
    assert conventions.main([str(ROOT)]) == 0, capsys.readouterr().err
    assert "fmt: skip" in capsys.readouterr().out


def test_the_allow_lists_only_shrink():
    config = tomllib.loads((ROOT / conventions.CONFIG).read_text())
    assert not config.get("env_read")  # every product read goes through contracts.env now
    assert len(config["fixed_sleep"]) <= 12
    assert config["fmt_skip"]["ceiling"] <= 218
    assert all(entry["reason"].strip() for entry in config.get("env_read", []) + config["fixed_sleep"])


def test_a_fixed_sleep_in_a_test_fails_and_a_poll_interval_or_a_yield_does_not(tmp_path):
    root = tree(
        tmp_path,
        {
            **SKIPS,
            "tests/test_a.py": """
                import asyncio
                import time
                from time import sleep as nap

                SETTLE_S = 0.5

                def test_waits(interval):
                    time.sleep(0.2)
                    nap(SETTLE_S * 2)
                    time.sleep(interval)

                async def test_yields():
                    await asyncio.sleep(0)
                    await asyncio.sleep(1)
            """,
        },
    )
    found = errors(root)
    assert [e.split(": ", 1)[1] for e in found] == [
        "fixed time.sleep in test_waits (wait on the condition with tests.waiting)",
        "fixed time.sleep in test_waits (wait on the condition with tests.waiting)",
        "fixed asyncio.sleep in test_yields (wait on the condition with tests.waiting)",
    ]
    assert found[0].startswith("tests/test_a.py:9: ")


def test_an_allowed_place_passes_and_a_stale_entry_fails(tmp_path):
    allowed = CONFIG + '[[fixed_sleep]]\nplace = "tests/test_a.py::test_chaos"\nreason = "the fault lasts 4 s"\n'
    files = {**SKIPS, "tests/test_a.py": "import time\n\ndef test_chaos():\n    time.sleep(4)\n"}
    assert errors(tree(tmp_path / "used", files, allowed)) == []
    files["tests/test_a.py"] = "def test_chaos():\n    pass\n"
    assert errors(tree(tmp_path / "stale", files, allowed)) == [
        "devtools/conventions.toml: [[fixed_sleep]] tests/test_a.py::test_chaos matches nothing any more: "
        "remove it (the allow-list only shrinks)"
    ]


def test_a_direct_environment_read_in_product_code_fails_outside_the_reader_and_entry_points(tmp_path):
    read = "import os\n\ndef port():\n    return os.environ.get('PORT')\n"
    root = tree(
        tmp_path,
        {
            **SKIPS,
            "metering/a.py": read,
            "platform/tenants/b.py": "from os import getenv\n\nLEVEL = getenv('LEVEL')\n",
            "evaluation/c.py": "import os as system\n\ndef home():\n    return dict(system.environ)\n",
            "contracts/env.py": read,
            "sim/__main__.py": read,
            "tests/test_env.py": read,
            "devtools/tool.py": read,
        },
    )
    assert sorted(e.split(" (", 1)[0] for e in errors(root)) == [
        "evaluation/c.py:4: direct read of os.environ in home",
        "metering/a.py:4: direct read of os.environ in port",
        "platform/tenants/b.py:3: direct read of os.getenv in <module>",
    ]


def test_fmt_skips_above_the_ceiling_fail_and_well_below_ask_for_a_lower_ceiling(tmp_path):
    three = {"bench/table.py": SKIPS["bench/table.py"] + "C = [5]  # fmt: skip\n"}
    assert errors(tree(tmp_path / "above", three)) == [
        "3 '# fmt: skip' comments, above the ceiling of 2 (devtools/conventions.toml): let the formatter lay it out, "
        "keep the comment only where a table reads better"
    ]
    assert errors(tree(tmp_path / "at", SKIPS)) == []
    assert errors(tree(tmp_path / "below", {})) == [
        "0 '# fmt: skip' comments, well below the ceiling of 2: lower it to 0 in devtools/conventions.toml"
    ]
