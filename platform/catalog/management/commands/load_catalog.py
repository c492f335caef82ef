"""``python manage.py load_catalog FILE``: validate, apply in one transaction, print the diff, publish."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalog.services import catalog_apply
from contracts.catalog_file import CatalogInvalid, parse_catalog


class Command(BaseCommand):
    help = "Load a catalog file (docs/catalog-format.md); idempotent; prints added/changed/removed."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["file"])
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror}") from None
        try:
            spec = parse_catalog(text, filename=path.name, sim_base_url=settings.SIM_BASE_URL)
        except CatalogInvalid as exc:
            raise CommandError("invalid catalog:\n" + "\n".join(exc.messages)) from None
        diff = catalog_apply(spec=spec)
        for line in diff.lines():
            self.stdout.write(line)
