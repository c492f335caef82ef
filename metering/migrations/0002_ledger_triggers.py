"""The ledger is append-only and every journal sums to zero, enforced by PostgreSQL itself."""

from django.db import migrations

FORWARD = """
CREATE FUNCTION metering_refuse_change() RETURNS trigger AS $$
BEGIN
  RAISE EXCEPTION 'the ledger is append-only (% on %)', TG_OP, TG_TABLE_NAME;
END $$ LANGUAGE plpgsql;

CREATE TRIGGER metering_journal_append_only BEFORE UPDATE OR DELETE ON metering_journal
  FOR EACH ROW EXECUTE FUNCTION metering_refuse_change();
CREATE TRIGGER metering_journalline_append_only BEFORE UPDATE OR DELETE ON metering_journalline
  FOR EACH ROW EXECUTE FUNCTION metering_refuse_change();

CREATE FUNCTION metering_journal_balanced() RETURNS trigger AS $$
DECLARE total bigint;
BEGIN
  SELECT COALESCE(SUM(amount_micros), 0) INTO total FROM metering_journalline WHERE journal_id = NEW.journal_id;
  IF total <> 0 THEN
    RAISE EXCEPTION 'journal % does not balance (sum %)', NEW.journal_id, total USING ERRCODE = '23514';
  END IF;
  RETURN NULL;
END $$ LANGUAGE plpgsql;

-- Checked at commit, once all lines of the journal are in.
CREATE CONSTRAINT TRIGGER metering_journalline_balanced AFTER INSERT ON metering_journalline
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION metering_journal_balanced();
"""

BACKWARD = """
DROP TRIGGER metering_journalline_balanced ON metering_journalline;
DROP FUNCTION metering_journal_balanced();
DROP TRIGGER metering_journalline_append_only ON metering_journalline;
DROP TRIGGER metering_journal_append_only ON metering_journal;
DROP FUNCTION metering_refuse_change();
"""


class Migration(migrations.Migration):
    dependencies = [("metering", "0001_initial")]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
