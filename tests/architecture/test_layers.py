"""The layer contracts in pyproject.toml hold for the tree, and they do catch a deliberate violation."""

from __future__ import annotations

import os

from tests.architecture.import_lint import ROOT, broken, empty_packages, lint


def test_the_tree_keeps_every_layer_contract():
    result = lint(ROOT, f"{ROOT}{os.pathsep}{ROOT / 'platform'}")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


def test_a_gateway_module_importing_django_or_an_app_or_the_console_a_model_breaks_the_build(tmp_path):
    empty_packages(tmp_path)
    (tmp_path / "routing" / "handlers.py").write_text("import django.db\nfrom metering import models\n")
    (tmp_path / "metering" / "models.py").write_text("")
    (tmp_path / "metering" / "views.py").write_text("import frontend\n")
    (tmp_path / "metering" / "selectors.py").write_text("")
    (tmp_path / "tenants" / "services.py").write_text("")
    (tmp_path / "frontend" / "views.py").write_text(
        "from metering import models\nfrom metering import selectors\nfrom tenants import services\n"
    )
    result = lint(tmp_path, str(tmp_path))
    assert result.returncode == 1
    assert "routing.handlers -> django (l.1)" in result.stdout
    assert "routing.handlers -> metering.models (l.2)" in result.stdout
    assert "metering.views -> frontend" in result.stdout
    assert "frontend.views -> metering.models (l.1)" in result.stdout
    assert "frontend.views -> metering.selectors" not in result.stdout  # selectors and services are the way in
    assert "frontend.views -> tenants.services" not in result.stdout
    assert broken(result.stdout) == 3


def test_product_code_importing_the_dev_tooling_or_a_fake_breaks_the_build(tmp_path):
    empty_packages(tmp_path)
    (tmp_path / "devtools" / "ports.py").write_text("")
    (tmp_path / "fakes" / "stripe_meter.py").write_text("")
    (tmp_path / "tokenway" / "settings.py").write_text("from devtools import ports\n")
    (tmp_path / "metering" / "billing.py").write_text("import fakes.stripe_meter\n")
    (tmp_path / "devtools" / "runall.py").write_text("import tokenway.settings\nimport fakes.stripe_meter\n")  # allowed
    result = lint(tmp_path, str(tmp_path))
    assert result.returncode == 1
    assert "tokenway.settings -> devtools.ports (l.1)" in result.stdout
    assert "metering.billing -> fakes.stripe_meter (l.1)" in result.stdout
    assert "devtools.runall ->" not in result.stdout
    assert broken(result.stdout) == 1


def test_a_cycle_between_platform_apps_breaks_the_build(tmp_path):
    empty_packages(tmp_path)
    (tmp_path / "publishing" / "keys.py").write_text("import apikeys.models\nimport credentials.selectors\n")
    (tmp_path / "apikeys" / "models.py").write_text("import tenants.models\n")
    (tmp_path / "credentials" / "selectors.py").write_text("")
    (tmp_path / "tenants" / "models.py").write_text("import outbox.services\n")
    (tmp_path / "outbox" / "services.py").write_text("")
    result = lint(tmp_path, str(tmp_path))
    assert result.returncode == 0, result.stdout[-2000:]  # downward imports only: kept
    (tmp_path / "tenants" / "services.py").write_text("import publishing.keys\n")  # "publish keys" from tenants
    (tmp_path / "credentials" / "services.py").write_text("import apikeys.models\n")  # siblings are independent
    result = lint(tmp_path, str(tmp_path))
    assert result.returncode == 1
    assert "tenants.services -> publishing.keys (l.1)" in result.stdout
    assert "credentials.services -> apikeys.models (l.1)" in result.stdout
    assert broken(result.stdout) == 1


def test_an_app_importing_the_project_package_or_a_platform_app_importing_a_domain_breaks_the_build(tmp_path):
    empty_packages(tmp_path)
    (tmp_path / "tokenway" / "urls.py").write_text("import metering.views\nimport tenants.invitation_page\n")
    (tmp_path / "metering" / "views.py").write_text("import foundation.api_errors\nimport publishing.drain\n")
    (tmp_path / "tenants" / "invitation_page.py").write_text("import accounts.forms\n")
    (tmp_path / "accounts" / "forms.py").write_text("")
    (tmp_path / "foundation" / "api_errors.py").write_text("")
    (tmp_path / "publishing" / "drain.py").write_text("")
    (tmp_path / "devtools" / "devstack.py").write_text("import tokenway.urls\n")  # an entry point: allowed
    result = lint(tmp_path, str(tmp_path))
    assert result.returncode == 0, result.stdout[-2000:]  # the root imports apps, apps import downwards
    (tmp_path / "metering" / "tasks.py").write_text("import tokenway.metrics\n")  # an app reaching the root
    (tmp_path / "tokenway" / "metrics.py").write_text("")
    (tmp_path / "publishing" / "balances.py").write_text("import metering.services\n")  # a platform app, a domain
    (tmp_path / "metering" / "services.py").write_text("")
    (tmp_path / "accounts" / "services.py").write_text("import tenants.models\n")  # the accounts <-> tenants cycle
    (tmp_path / "tenants" / "models.py").write_text("")
    (tmp_path / "foundation" / "health.py").write_text("import metering.services\n")  # the base reaching up
    result = lint(tmp_path, str(tmp_path))
    assert result.returncode == 1
    for line in (
        "metering.tasks -> tokenway.metrics (l.1)",
        "publishing.balances -> metering.services (l.1)",
        "accounts.services -> tenants.models (l.1)",
        "foundation.health -> metering.services (l.1)",
    ):
        assert line in result.stdout
    assert "devtools.devstack ->" not in result.stdout
    assert broken(result.stdout) == 3  # the layers, the project package, foundation's own
