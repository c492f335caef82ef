"""axe-core (the npm devDependency in frontend/package.json) run inside the page by Playwright.

The script is added to the browser context as an init script, so it loads before the page's own scripts
and no Content-Security-Policy of the page can refuse it; ``axe_serious`` returns the serious and critical
WCAG 2.x A/AA violations of the page as it stands.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
AXE_JS = ROOT / "frontend" / "node_modules" / "axe-core" / "axe.min.js"  # `npm ci` in frontend/ installs it
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
BLOCKING = ("serious", "critical")

RUN = """async (tags) => {
  const result = await window.axe.run(document, { runOnly: { type: "tag", values: tags } });
  return result.violations.filter((v) => ["serious", "critical"].includes(v.impact)).map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ") + " " + (n.failureSummary || "").split("\\n")[1]),
  }));
}"""


def axe_script() -> Path | None:
    """The axe-core build to inject (``AXE_CORE_JS`` overrides the installed one), None when absent."""
    override = os.environ.get("AXE_CORE_JS")
    path = Path(override) if override else AXE_JS
    return path if path.is_file() else None


def axe_install(context: Any) -> None:
    script = axe_script()
    if script is None:
        raise FileNotFoundError(f"{AXE_JS} is missing: run `npm ci` in frontend/ (axe-core is a devDependency)")
    context.add_init_script(path=str(script))


def axe_serious(page: Any) -> list[dict[str, Any]]:
    """Serious and critical WCAG A/AA violations of the page: [{id, impact, help, nodes}]."""
    return list(page.evaluate(RUN, WCAG_TAGS))
