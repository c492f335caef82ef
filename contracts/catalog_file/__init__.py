"""The catalog file (docs/catalog-format.md): one Django-free reader for the platform and the simulator."""

from contracts.catalog_file.parse import (
    CATALOG_FORMAT_VERSION,
    PROVIDER_OVERRIDABLE,
    CatalogInvalid,
    CatalogSpec,
    effective_offering,
    parse_catalog,
)

__all__ = [
    "CATALOG_FORMAT_VERSION",
    "PROVIDER_OVERRIDABLE",
    "CatalogInvalid",
    "CatalogSpec",
    "effective_offering",
    "parse_catalog",
]
