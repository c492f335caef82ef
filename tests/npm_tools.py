"""The pinned npm tools the tests drive (agent CLIs, the Node SDKs), installed into tests/.tools when missing.

One place for the pins, and one install at a time: the test lanes run side by side, and two ``npm install``
into one prefix at once remove each other's packages (a lane then found no ``codex`` binary), so every
install holds an exclusive lock on tests/.tools/.lock and checks again what is there once it has it.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parent / ".tools"
# binary -> (package, version)
PINS: dict[str, tuple[str, str]] = {
    "claude": ("@anthropic-ai/claude-code", "2.1.332"),
    "codex": ("@openai/codex", "0.171.0"),
}


def installed_version(package: str) -> str:
    manifest = TOOLS / "node_modules" / package / "package.json"
    return str(json.loads(manifest.read_text()).get("version", "")) if manifest.exists() else ""


def npm_package(package: str, version: str) -> Path:
    """``package`` at ``version`` in tests/.tools (its folder), installed when missing; skips without npm."""
    folder = TOOLS / "node_modules" / package
    if installed_version(package) == version:
        return folder
    if not shutil.which("npm"):
        pytest.skip(f"npm is not installed: cannot install {package}")
    TOOLS.mkdir(parents=True, exist_ok=True)
    with (TOOLS / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if installed_version(package) == version:  # another lane installed it while this one waited
            return folder
        command = ["npm", "install", "--no-audit", "--no-fund", "--save-exact", "--prefix", str(TOOLS)]
        try:
            subprocess.run([*command, f"{package}@{version}"], check=True, capture_output=True, timeout=300)
        except (subprocess.SubprocessError, OSError) as exc:
            pytest.skip(f"npm registry unreachable or install failed ({exc!r}): {package} not available")
    return folder


def npm_cli(binary: str) -> Path:
    """The pinned CLI ``binary`` (a key of :data:`PINS`), installed when missing."""
    package, version = PINS[binary]
    npm_package(package, version)
    return TOOLS / "node_modules" / ".bin" / binary
