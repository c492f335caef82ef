"""The pinned Python clients the as-deployed suite drives (LangChain, LiteLLM, instructor), in their own venv.

They are not the project's dependencies: their trees (LiteLLM alone pulls ~80 packages) would lengthen every
install, and their pins of ``openai``/``anthropic``/``httpx`` would fight ours. So they live in
tests/.tools/clients-venv, created with ``uv`` on first use, every pin installed at once under the same lock
as tests/npm_tools.py (lanes run side by side; one install at a time), and each client runs as a subprocess
of that venv's python.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from tests.npm_tools import TOOLS

VENV = TOOLS / "clients-venv"
PINS: dict[str, str] = {  # distribution -> version
    "langchain-openai": "1.7.4",
    "langchain-anthropic": "1.7.10",
    "litellm": "1.110.2",
    "instructor": "1.17.0",
}
STAMP = VENV / "pins.txt"  # what the last install brought: a changed pin reinstalls


def _wanted() -> str:
    return "\n".join(f"{name}=={version}" for name, version in sorted(PINS.items())) + "\n"


def _uv() -> str | None:
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.exists() else shutil.which("uv")


def clients_python() -> Path:
    """The python of the clients' venv, every pin installed first when one is missing."""
    TOOLS.mkdir(parents=True, exist_ok=True)
    python = VENV / "bin" / "python"
    with (TOOLS / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if python.exists() and STAMP.exists() and STAMP.read_text() == _wanted():
            return python
        uv = _uv()
        if uv is None:
            pytest.skip("uv is not installed: cannot install the Python clients")
        try:
            subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(VENV)], check=True, capture_output=True)
            subprocess.run(
                [uv, "pip", "install", "-q", "--python", str(python), *_wanted().split()],
                check=True,
                capture_output=True,
                timeout=600,
            )
        except (subprocess.SubprocessError, OSError) as exc:
            pytest.skip(f"package index unreachable or install failed ({exc!r}): {' '.join(PINS)}")
        STAMP.write_text(_wanted())
    return python


def installed_version(distribution: str) -> str:
    """The version of ``distribution`` in the clients' venv ("" when absent)."""
    found = metadata.distributions(path=[str(p) for p in (VENV / "lib").glob("python*/site-packages")])
    return next((d.version for d in found if d.metadata["Name"].lower() == distribution.lower()), "")
