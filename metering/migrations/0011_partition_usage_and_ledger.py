"""Usage records, journals and journal lines become monthly RANGE-partitioned tables, with their rows.

Each table is rebuilt: the old one is renamed, a partitioned parent is made from it (same columns, checks),
month partitions cover the months that hold rows plus the previous, current and MONTHS_AHEAD next ones, a
DEFAULT partition takes anything else, the rows are copied, the old table dropped, then keys, indexes,
foreign keys and the ledger's triggers are created on the parent (PostgreSQL clones them to every
partition, present and future). Keys include the partition column; the request id and journal key are
held once by the new unpartitioned tables metering_usagekey and metering_journalkey, filled from the rows.
Journal lines get their journal's created_at (the partition column) and lose the database foreign key to
the journal, whose key is now (id, created_at): the deferred balance trigger checks the journal is there.

Reversible: backwards rebuilds plain tables from the rows still attached (rows of partitions detached by
retention stay in their detached tables). Both directions hold an ACCESS EXCLUSIVE lock on the tables for
the copy: run it in a maintenance window on a large database.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import django.db.models.deletion
from django.db import migrations, models

from metering.partitions import MONTHS_AHEAD, default_name, month_add, month_start, partition_name

APPEND_ONLY = """
CREATE TRIGGER metering_journal_append_only BEFORE UPDATE OR DELETE ON metering_journal
  FOR EACH ROW EXECUTE FUNCTION metering_refuse_change();
CREATE TRIGGER metering_journalline_append_only BEFORE UPDATE OR DELETE ON metering_journalline
  FOR EACH ROW EXECUTE FUNCTION metering_refuse_change();
CREATE CONSTRAINT TRIGGER metering_journalline_balanced AFTER INSERT ON metering_journalline
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION metering_journal_balanced();
"""

# Lines name their journal by (id, created_at); the line's journal must exist and its lines sum to zero.
BALANCED_PARTITIONED = """
CREATE OR REPLACE FUNCTION metering_journal_balanced() RETURNS trigger AS $$
DECLARE total bigint;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM metering_journal WHERE id = NEW.journal_id AND created_at = NEW.created_at) THEN
    RAISE EXCEPTION 'journal line % names no journal (% at %)', NEW.id, NEW.journal_id, NEW.created_at
      USING ERRCODE = '23503';
  END IF;
  SELECT COALESCE(SUM(amount_micros), 0) INTO total FROM metering_journalline
    WHERE journal_id = NEW.journal_id AND created_at = NEW.created_at;
  IF total <> 0 THEN
    RAISE EXCEPTION 'journal % does not balance (sum %)', NEW.journal_id, total USING ERRCODE = '23514';
  END IF;
  RETURN NULL;
END $$ LANGUAGE plpgsql;
"""

BALANCED_PLAIN = """
CREATE OR REPLACE FUNCTION metering_journal_balanced() RETURNS trigger AS $$
DECLARE total bigint;
BEGIN
  SELECT COALESCE(SUM(amount_micros), 0) INTO total FROM metering_journalline WHERE journal_id = NEW.journal_id;
  IF total <> 0 THEN
    RAISE EXCEPTION 'journal % does not balance (sum %)', NEW.journal_id, total USING ERRCODE = '23514';
  END IF;
  RETURN NULL;
END $$ LANGUAGE plpgsql;
"""

# (table, partition column, unique column, unique constraint before, unique constraint after, _like index)
TABLES = {
    "metering_usagerecord": ("finished_at", "request_id", "metering_usagerecord_request_id_key",
                             "usage_request_once", "metering_usagerecord_request_id_1c7d64cd_like"),
    "metering_journal": ("created_at", "key", "metering_journal_key_key", "journal_key_once",
                         "metering_journal_key_24371e05_like"),
    "metering_journalline": ("created_at", None, None, None, None),
}  # fmt: skip
LINE_JOURNAL_FK = "metering_journalline_journal_id_c0aded51_fk_metering_journal_id"
KEY_TABLES = """
CREATE TABLE metering_usagekey (request_id varchar(64) PRIMARY KEY, finished_at timestamptz NOT NULL);
INSERT INTO metering_usagekey SELECT request_id, finished_at FROM metering_usagerecord;
CREATE TABLE metering_journalkey (key varchar(128) PRIMARY KEY, created_at timestamptz NOT NULL);
INSERT INTO metering_journalkey SELECT key, created_at FROM metering_journal;
CREATE INDEX journal_key_prefix ON metering_journal (key varchar_pattern_ops);
"""


_LAST_ID = "SELECT GREATEST(COALESCE(MAX(id), 0), (SELECT last_value FROM {seq})) FROM {table}"  # noqa: S608


def _all(cursor: Any, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    cursor.execute(sql, params or [])
    return list(cursor.fetchall())


def _indexes(cursor: Any, table: str, skip: set[str]) -> list[str]:
    """CREATE INDEX statements of the table's indexes that back no key constraint."""
    rows = _all(
        cursor,
        "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = %s "
        "AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass AND contype IN "
        "('p', 'u'))",
        [table, table],
    )
    return [definition for name, definition in rows if name not in skip]


def _foreign_keys(cursor: Any, table: str, skip: set[str]) -> list[str]:
    rows = _all(
        cursor,
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'f'",
        [table],
    )
    return [f"ALTER TABLE {table} ADD CONSTRAINT {name} {definition}" for name, definition in rows if name not in skip]


def _columns(cursor: Any, table: str) -> list[str]:
    rows = _all(
        cursor,
        "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped "
        "ORDER BY attnum",
        [table],
    )
    return [name for (name,) in rows]


def _months(cursor: Any, source: str, column: str) -> list[datetime]:
    now = month_start(datetime.now(tz=UTC))
    wanted = {month_add(now, n) for n in range(-1, MONTHS_AHEAD + 1)}
    rows = _all(cursor, f"SELECT DISTINCT date_trunc('month', {column} AT TIME ZONE 'UTC') FROM {source}")  # noqa: S608
    return sorted(wanted | {month.replace(tzinfo=UTC) for (month,) in rows})


def _to_partitioned(cursor: Any, table: str) -> None:
    column, unique, _, unique_after, like = TABLES[table]
    indexes = _indexes(cursor, table, skip={like} if like else set())
    fks = _foreign_keys(cursor, table, skip={LINE_JOURNAL_FK})
    old = f"{table}_unpartitioned"
    cursor.execute(f"ALTER TABLE {table} RENAME TO {old}")
    lines = table == "metering_journalline"
    extra = ", created_at timestamptz NOT NULL" if lines else ""  # the journal's, for the lines
    cursor.execute(f"CREATE TABLE {table} (LIKE {old} INCLUDING CONSTRAINTS{extra}) PARTITION BY RANGE ({column})")
    columns = ", ".join(_columns(cursor, old))
    select = f"SELECT {columns} FROM {old}"  # noqa: S608 - catalog names
    months_source = old
    if lines:
        select = (
            f"SELECT {', '.join(f'l.{c}' for c in _columns(cursor, old))}, j.created_at "  # noqa: S608
            f"FROM {old} l JOIN metering_journal j ON j.id = l.journal_id"
        )
        columns += ", created_at"
        months_source = "metering_journal"
    for month in _months(cursor, months_source, column):
        bounds = f"FROM ('{month.isoformat()}') TO ('{month_add(month, 1).isoformat()}')"
        cursor.execute(f"CREATE TABLE {partition_name(table, month)} PARTITION OF {table} FOR VALUES {bounds}")
    cursor.execute(f"CREATE TABLE {default_name(table)} PARTITION OF {table} DEFAULT")
    cursor.execute(f"INSERT INTO {table} ({columns}) {select}")
    last = _all(cursor, _LAST_ID.format(seq=f"{table}_id_seq", table=old))
    cursor.execute(f"DROP TABLE {old}")
    cursor.execute(f"CREATE SEQUENCE {table}_id_seq OWNED BY {table}.id")
    cursor.execute("SELECT setval(%s, %s)", [f"{table}_id_seq", max(int(last[0][0]), 1)])
    cursor.execute(f"ALTER TABLE {table} ALTER COLUMN id SET DEFAULT nextval('{table}_id_seq')")
    cursor.execute(f"ALTER TABLE {table} ADD CONSTRAINT {table}_pkey PRIMARY KEY (id, {column})")
    if unique:
        cursor.execute(f"ALTER TABLE {table} ADD CONSTRAINT {unique_after} UNIQUE ({unique}, {column})")
    for statement in indexes + fks:
        cursor.execute(statement)


def _to_plain(cursor: Any, table: str) -> None:
    column, unique, unique_before, _, like = TABLES[table]
    indexes = _indexes(cursor, table, skip={"journal_key_prefix"})
    fks = _foreign_keys(cursor, table, skip=set())
    old = f"{table}_partitioned"
    cursor.execute(f"ALTER TABLE {table} RENAME TO {old}")
    cursor.execute(f"CREATE TABLE {table} (LIKE {old} INCLUDING CONSTRAINTS)")
    if table == "metering_journalline":
        cursor.execute(f"ALTER TABLE {table} DROP COLUMN created_at")
    columns = ", ".join(_columns(cursor, table))
    cursor.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM {old}")  # noqa: S608 - catalog names
    last = _all(cursor, _LAST_ID.format(seq=f"{table}_id_seq", table=old))
    cursor.execute(f"DROP TABLE {old}")  # its partitions and its sequence with it
    cursor.execute(f"ALTER TABLE {table} ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY")
    cursor.execute("SELECT setval(pg_get_serial_sequence(%s, 'id'), %s)", [table, max(int(last[0][0]), 1)])
    cursor.execute(f"ALTER TABLE {table} ADD CONSTRAINT {table}_pkey PRIMARY KEY (id)")
    if unique:
        cursor.execute(f"ALTER TABLE {table} ADD CONSTRAINT {unique_before} UNIQUE ({unique})")
        cursor.execute(f"CREATE INDEX {like} ON {table} ({unique} varchar_pattern_ops)")
    if table == "metering_journalline":
        fks.append(
            f"ALTER TABLE {table} ADD CONSTRAINT {LINE_JOURNAL_FK} FOREIGN KEY (journal_id) "
            "REFERENCES metering_journal(id) DEFERRABLE INITIALLY DEFERRED"
        )
    for statement in indexes + fks:
        cursor.execute(statement)


def forward(apps: Any, schema_editor: Any) -> None:
    with schema_editor.connection.cursor() as cursor:
        _to_partitioned(cursor, "metering_journalline")  # first: it reads the journals' created_at
        _to_partitioned(cursor, "metering_journal")
        _to_partitioned(cursor, "metering_usagerecord")
        cursor.execute(KEY_TABLES)
        cursor.execute(BALANCED_PARTITIONED)
        cursor.execute(APPEND_ONLY)


def backward(apps: Any, schema_editor: Any) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("DROP TABLE metering_usagekey, metering_journalkey")
        cursor.execute("DROP INDEX journal_key_prefix")
        _to_plain(cursor, "metering_usagerecord")
        _to_plain(cursor, "metering_journal")  # first: the lines' foreign key names it
        _to_plain(cursor, "metering_journalline")
        cursor.execute(BALANCED_PLAIN)
        cursor.execute(APPEND_ONLY)


STATE = [
    migrations.AlterField(model_name="usagerecord", name="request_id", field=models.CharField(max_length=64)),
    migrations.AddConstraint(
        model_name="usagerecord",
        constraint=models.UniqueConstraint(fields=("request_id", "finished_at"), name="usage_request_once"),
    ),
    migrations.AlterField(model_name="journal", name="key", field=models.CharField(max_length=128)),
    migrations.AddConstraint(
        model_name="journal",
        constraint=models.UniqueConstraint(fields=("key", "created_at"), name="journal_key_once"),
    ),
    migrations.AddIndex(
        model_name="journal",
        index=models.Index(fields=["key"], name="journal_key_prefix", opclasses=["varchar_pattern_ops"]),
    ),
    migrations.AddField(
        model_name="journalline", name="created_at", field=models.DateTimeField(), preserve_default=False
    ),
    migrations.AlterField(
        model_name="journalline",
        name="journal",
        field=models.ForeignKey(
            db_constraint=False,
            on_delete=django.db.models.deletion.PROTECT,
            related_name="lines",
            to="metering.journal",
        ),
    ),
    migrations.CreateModel(
        name="UsageKey",
        fields=[
            ("request_id", models.CharField(max_length=64, primary_key=True, serialize=False)),
            ("finished_at", models.DateTimeField()),
        ],
    ),
    migrations.CreateModel(
        name="JournalKey",
        fields=[
            ("key", models.CharField(max_length=128, primary_key=True, serialize=False)),
            ("created_at", models.DateTimeField()),
        ],
    ),
]


class Migration(migrations.Migration):
    dependencies = [("metering", "0010_usage_reported_cost_index")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(forward, backward)], state_operations=STATE
        ),
        migrations.CreateModel(
            name="LedgerCarry",
            fields=[
                (
                    "account",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.PROTECT,
                        primary_key=True,
                        related_name="carry",
                        serialize=False,
                        to="metering.account",
                    ),
                ),
                ("amount_micros", models.BigIntegerField(default=0)),
                ("through", models.DateTimeField()),
            ],
        ),
    ]
