"""The gateway's layer contract (pyproject.toml): a cycle through its metrics breaks the build.

The cycle it replaces ran telemetry.metrics -> handlers.health -> gateway -> forwarding -> ... ->
telemetry.tracing -> telemetry.metrics, hidden by an import inside a function body. Each test lints a
small tree of stub modules with this repository's contracts.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.architecture.import_lint import broken, empty_packages, lint

# A call's path downwards, each module importing the next at its top (the subpackages' real modules).
DOWNWARD = {
    "app": "from routing.handlers.health import snapshot\n",
    "gateway": "from routing.forwarding.forwarder import Forwarder\n",
    "handlers/health": "from routing.gateway import Gateway\n",
    "forwarding/forwarder": "from routing.relay.answer import relay_json\nfrom routing.telemetry import metrics\n",
    "relay/answer": "from routing.handoff.drain import drain\n",
    "handoff/drain": "from routing.upstream.attempt import Opened\n",
    "upstream/attempt": "from routing.telemetry.tracing import span\n",
    "telemetry/tracing": "from routing.telemetry.metrics import endpoint_label\n",
    "telemetry/metrics": "from routing.http.asgi_io import respond\n",
    "http/asgi_io": "",
}


def _tree(tmp_path: Path) -> Path:
    empty_packages(tmp_path)
    for module, source in DOWNWARD.items():
        path = tmp_path / "routing" / f"{module}.py"
        path.parent.mkdir(exist_ok=True)
        (path.parent / "__init__.py").touch()
        path.write_text(source)
    return tmp_path


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    return lint(tree, str(tree))


def test_the_path_downwards_keeps_every_contract(tmp_path):
    result = _lint(_tree(tmp_path))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert broken(result.stdout) == 0


def test_metrics_reading_the_health_endpoint_in_a_function_body_breaks_the_build(tmp_path):
    tree = _tree(tmp_path)
    (tree / "routing" / "telemetry" / "metrics.py").write_text(
        "def _capacity() -> None:\n    from routing.handlers.health import snapshot\n"
    )
    result = _lint(tree)
    assert result.returncode == 1
    assert "routing.telemetry is not allowed to import routing.handlers" in result.stdout
    assert "routing.telemetry.metrics -> routing.handlers.health (l.2)" in result.stdout
    assert broken(result.stdout) == 1


def test_a_gateway_module_without_a_place_in_the_layers_breaks_the_build(tmp_path):
    tree = _tree(tmp_path)
    (tree / "routing" / "helpers.py").write_text("import routing.http.asgi_io\n")
    result = _lint(tree)
    assert result.returncode == 1
    assert "- routing.helpers" in result.stdout
    assert broken(result.stdout) == 1
