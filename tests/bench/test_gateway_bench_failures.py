"""bench/gateway_bench.py prints its whole table when a peer fails: each cell says what failed and why.

Three real peers through the bench's own functions: the Node mock upstream (answers everything), the same
mock started to exit two seconds in (it dies during its warm-up, midway through its measurement), and a
port where nothing listens. One wrk step per cell, one second each, one warm-up step.
"""

from __future__ import annotations

import contextlib
import re
import shutil
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from bench.gateway_bench import ROWS, measured, table
from bench.gateway_load import Target, process, wait_port
from bench.gateway_peers import ensure_wrk
from bench.gateway_upstreams import MOCK_JS
from devtools.ports import free_port

pytestmark = pytest.mark.slow


# Prepended to the mock: the process exits on the first streaming request, so the non-streaming cells are
# measured and the streaming ones meet a peer that died midway.
EXIT_ON_FIRST_STREAM_JS = """
const httpModule = require('http');
const createServer = httpModule.createServer.bind(httpModule);
httpModule.createServer = (handler) => createServer((req, res) => {
  let text = '';
  req.on('data', (d) => { text += d; });
  req.on('end', () => { if (text.includes('"stream": true')) process.exit(3); });
  handler(req, res);
});
"""


def mock_peer(name: str, stack: contextlib.ExitStack, workdir: Path, *, exits_on_stream: bool = False) -> Target:
    """The Node mock upstream as a peer (the bench's own), optionally one that dies on the first stream."""
    script = workdir / f"{name}.js"
    script.write_text((EXIT_ON_FIRST_STREAM_JS if exits_on_stream else "") + MOCK_JS)
    port = free_port()
    log = workdir / f"{name}.log"
    proc = stack.enter_context(process(["node", str(script), str(port)], log=log))
    assert wait_port(port, 10), log.read_text()
    return Target(name, f"http://127.0.0.1:{port}/v1/chat/completions", pid=proc.pid)


def refusing() -> Target:
    return Target("refuses", f"http://127.0.0.1:{free_port()}/v1/chat/completions")


def broken() -> Target:
    raise RuntimeError("could not install the peer")


def rows_of(text: str) -> dict[str, list[str]]:
    lines = text.splitlines()[2 : 2 + len(ROWS)]
    return {line.strip("| ").split(" | ")[0]: line.strip("| ").split(" | ")[1:] for line in lines}


@pytest.mark.skipif(shutil.which("node") is None, reason="the mock upstream needs node")
def test_the_table_survives_a_peer_that_exits_midway_and_one_that_refuses(tmp_path: Path) -> None:
    if ensure_wrk():  # the bench's own install step (apt-get as root); .ci/run installs wrk
        pytest.skip("wrk is not installed and could not be installed here")
    with contextlib.ExitStack() as stack:
        starters: dict[str, Callable[[], Target]] = {
            "healthy": partial(mock_peer, "healthy", stack, tmp_path),
            "exits-midway": partial(mock_peer, "exits-midway", stack, tmp_path, exits_on_stream=True),
            "refuses": refusing,
            "broken": broken,
        }
        targets = [measured(name, start, 1.0, tmp_path, warm_max_steps=1) for name, start in starters.items()]

    text = table(targets)
    rows = rows_of(text)
    assert text.splitlines()[0] == "| metric | healthy | exits-midway | refuses | broken |"
    healthy, exited, refused, not_started = zip(*rows.values(), strict=True)
    figures = dict(zip(rows, healthy, strict=True))
    assert float(figures["req/s, c=50, non-streaming"].replace(",", "")) > 0
    assert float(figures["streams/s, c=10 (50 chunks)"].replace(",", "")) > 0
    # the peer that died midway: its non-streaming cells measured, then each cell says why it has no figure
    before = dict(zip(rows, exited, strict=True))
    assert float(before["req/s, c=50, non-streaming"].replace(",", "")) > 0, text
    assert float(before["RSS loaded (MB)"]) > 0, text
    assert before["streams/s, c=10 (50 chunks)"].startswith("failed: WrkError: "), text
    assert before["streams/s, c=10 (50 chunks)"].endswith("(process exited)"), text
    assert before["added TTFB, single stream (ms)"].startswith("failed: ConnectionRefusedError"), text
    # nothing listening: every measured cell failed with the reason, none is a number
    refusals = dict(zip(rows, refused, strict=True))
    assert refusals["req/s, c=50, non-streaming"].startswith("failed: WrkError: wrk gave no result"), text
    assert refusals["added TTFB, single stream (ms)"].startswith("failed: ConnectionRefusedError"), text
    assert set(not_started) == {"n/a (not started)"}
    assert "- broken: not available — start failed: RuntimeError: could not install the peer" in text
    assert re.search(r"^- refuses: warm_steps, rps_c50, errors, .* failed — WrkError: .*Connection refused", text, re.M)
