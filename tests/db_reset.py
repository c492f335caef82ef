"""Emptying the test database after a transactional test in milliseconds instead of Django's third of a second.

Django's ``TransactionTestCase`` ends each test with ``manage.py flush``: one ``TRUNCATE`` of every table
(PostgreSQL pays for each table: new files, catalog rows, an exclusive lock) and then the ``post_migrate``
signal, which writes every content type and permission back. Measured on the embedded server: 0.27 s for
the TRUNCATE and 0.12 s for the signal, after each of the suite's ~700 transactional tests.

Here, in one transaction that first locks every table against writers (as TRUNCATE's lock did), one query
finds the tables that hold rows, and only those are emptied: ``DELETE``
(every foreign key is deferred, so the order does not matter) and ``TRUNCATE`` for the append-only tables
whose triggers refuse a ``DELETE``. Content types and permissions are kept, so nothing needs writing back;
the state the next test sees is the one Django's flush leaves. Anything unexpected (an error from the
server) falls back to Django's own flush, so the clean slate never depends on this shortcut.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import DatabaseError, connections, transaction
from django.test import TransactionTestCase

# Written back the same by ``post_migrate`` after a flush: kept instead, the flush does not emit the signal.
KEPT = frozenset({"django_content_type", "auth_permission"})
# Tables with a trigger of our own that fires on DELETE (pg_trigger.tgtype bit 3): the ledger's append-only guards.
DELETE_GUARDED = """
SELECT DISTINCT c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
WHERE NOT t.tgisinternal AND (t.tgtype & 8) <> 0
"""
_tables: dict[str, tuple[list[str], frozenset[str]]] = {}


def _layout(alias: str) -> tuple[list[str], frozenset[str]]:
    """The model tables to empty on ``alias`` and which of them need TRUNCATE; read once per session."""
    if alias not in _tables:
        connection = connections[alias]
        with connection.cursor() as cursor:
            names = connection.introspection.django_table_names(only_existing=True, include_views=False)
            cursor.execute(DELETE_GUARDED)
            guarded = frozenset(row[0] for row in cursor.fetchall())
        _tables[alias] = (sorted(set(names) - KEPT), guarded)
    return _tables[alias]


def empty_tables(alias: str) -> None:
    """Every model table of ``alias`` empty but content types and permissions, in one transaction."""
    tables, guarded = _layout(alias)
    connection = connections[alias]
    quote = connection.ops.quote_name
    filled_query = " UNION ALL ".join(
        f"SELECT {index} FROM (SELECT 1 FROM {quote(name)} LIMIT 1) AS t{index}" for index, name in enumerate(tables)
    )
    with transaction.atomic(using=alias), connection.cursor() as cursor:
        # As TRUNCATE did: wait for a writer still in a transaction (a consumer booking the last test's usage)
        # and hold new ones off until this commits, so no row of the last test outlives the reset.
        cursor.execute(f"LOCK TABLE {', '.join(map(quote, tables))} IN SHARE ROW EXCLUSIVE MODE")
        cursor.execute(filled_query)
        filled = [tables[row[0]] for row in cursor.fetchall()]
        truncate = [quote(name) for name in filled if name in guarded]
        if truncate:
            cursor.execute(f"TRUNCATE {', '.join(truncate)} CASCADE")
        delete = [f"DELETE FROM {quote(name)}" for name in filled if name not in guarded]
        if delete:
            cursor.execute("; ".join(delete))


def install() -> None:
    """Make every transactional test of the session end with :func:`empty_tables`."""
    django_flush: Callable[[TransactionTestCase], None] = getattr(TransactionTestCase, "_fixture_teardown")  # noqa: B009

    def fixture_teardown(self: Any) -> None:
        if self.available_apps is not None or self.serialized_rollback:
            django_flush(self)  # a subset of apps, or saved rows to restore: Django's own rules
            return
        for alias in self._databases_names(include_mirrors=False):
            try:
                empty_tables(alias)
            except DatabaseError:
                django_flush(self)
                return

    setattr(TransactionTestCase, "_fixture_teardown", fixture_teardown)  # noqa: B010 (private: not in the stubs)
