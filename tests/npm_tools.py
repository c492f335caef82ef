"""The pinned npm tools the tests drive (agent CLIs, the Node SDKs), installed into tests/.tools when missing.

One place for the pins, and one install of all of them: the test lanes run side by side, and an ``npm install``
into the prefix rewrites ``node_modules/.bin`` while it runs, so a lane that found its CLI present could lose it
to another lane's install of something else (a lane then found no ``codex`` binary). So every check holds an
exclusive lock on tests/.tools/.lock, and when any pin is missing one ``npm install`` brings every pin: after
the first test that needs a tool, npm never runs again in that checkout.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parent / ".tools"
PINS: dict[str, str] = {  # package -> version
    "@anthropic-ai/claude-code": "2.1.332",
    "@openai/codex": "0.171.0",
    "openai": "6.30.1",  # the Node SDK: the last major that runs on Node 20 (7.x wants Node 22)
    # The Vercel AI SDK and its OpenAI (Responses and chat) and Anthropic providers: 6.x / 3.x are the last
    # majors on Node 18+ (7.x / 4.x want Node 22); zod is their peer and the openai SDK's for its zod helpers.
    "ai": "6.0.326",
    "@ai-sdk/openai": "3.0.141",
    "@ai-sdk/anthropic": "3.0.140",
    "zod": "4.1.12",
}
BINARIES = {"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex"}


def installed_version(package: str) -> str:
    manifest = TOOLS / "node_modules" / package / "package.json"
    return str(json.loads(manifest.read_text()).get("version", "")) if manifest.exists() else ""


def _missing() -> list[str]:
    return [f"{package}@{version}" for package, version in PINS.items() if installed_version(package) != version]


def npm_package(package: str) -> Path:
    """The pinned ``package``'s folder in tests/.tools, every pin installed first when one is missing."""
    assert package in PINS, f"{package} is not pinned in tests/npm_tools.py"
    TOOLS.mkdir(parents=True, exist_ok=True)
    with (TOOLS / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if missing := _missing():
            if not shutil.which("npm"):
                pytest.skip(f"npm is not installed: cannot install {', '.join(missing)}")
            command = ["npm", "install", "--no-audit", "--no-fund", "--save-exact", "--prefix", str(TOOLS)]
            try:
                subprocess.run([*command, *missing], check=True, capture_output=True, timeout=300)
            except (subprocess.SubprocessError, OSError) as exc:
                pytest.skip(f"npm registry unreachable or install failed ({exc!r}): {', '.join(missing)}")
    return TOOLS / "node_modules" / package


def npm_cli(binary: str) -> Path:
    """The pinned CLI ``binary`` (a key of :data:`BINARIES`), installed when missing."""
    npm_package(BINARIES[binary])
    return TOOLS / "node_modules" / ".bin" / binary
