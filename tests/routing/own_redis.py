"""A redis-server of the test's own on a free port, to kill and bring back (never the shared one)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from devtools.devstack import _redis_binary
from devtools.ports import free_port, wait_for_port


class OwnRedis:
    def __init__(self) -> None:
        self.port = free_port()
        self.folder = Path(tempfile.mkdtemp(prefix="tokenway-own-redis-"))
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Without persistence: a restart comes back empty, like a cache node replaced."""
        args = [_redis_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder),
                "--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"]  # fmt: skip
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port)

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None

    def close(self) -> None:
        self.kill()
        shutil.rmtree(self.folder, ignore_errors=True)
