"""A prepaid tenant's available balance never goes below zero, enforced by PostgreSQL itself.

A CHECK cannot see the tenant's billing mode, so a trigger on metering_balance refuses any update that
lowers a prepaid tenant's ``available`` balance below zero (SQLSTATE 23514, check_violation). A credit
that leaves an old negative balance still negative passes (it raises it); postpaid tenants may owe.
"""

from django.db import migrations, models

FORWARD = """
CREATE FUNCTION metering_balance_floor() RETURNS trigger AS $$
DECLARE acct_kind text; mode text;
BEGIN
  IF NEW.amount_micros >= 0 OR NEW.amount_micros >= OLD.amount_micros THEN
    RETURN NEW;
  END IF;
  SELECT a.kind, t.billing_mode INTO acct_kind, mode
    FROM metering_account a JOIN tenants_tenant t ON t.id = a.tenant_id WHERE a.id = NEW.account_id;
  IF acct_kind = 'available' AND mode = 'prepaid' THEN
    RAISE EXCEPTION 'prepaid balance of account % would fall to %', NEW.account_id, NEW.amount_micros
      USING ERRCODE = '23514';
  END IF;
  RETURN NEW;
END $$ LANGUAGE plpgsql;

CREATE TRIGGER metering_balance_prepaid_floor BEFORE UPDATE OF amount_micros ON metering_balance
  FOR EACH ROW EXECUTE FUNCTION metering_balance_floor();
"""

BACKWARD = """
DROP TRIGGER metering_balance_prepaid_floor ON metering_balance;
DROP FUNCTION metering_balance_floor();
"""


class Migration(migrations.Migration):
    dependencies = [("metering", "0003_usage_error_code"), ("tenants", "0003_invitation_pending_unique")]

    operations = [
        migrations.AlterField(
            model_name="account",
            name="kind",
            field=models.CharField(
                choices=[
                    ("available", "Tenant available (prepaid funds; negative = owed on postpaid)"),
                    ("spent", "Tenant spent (the platform's revenue, per tenant)"),
                    ("provider_cost", "Provider cost (expense)"),
                    ("provider_payable", "Provider cost payable"),
                    ("stripe_clearing", "Stripe clearing (money received)"),
                    ("promotions", "Promotional credit (expense)"),
                    ("hold_shortfall", "Hold shortfall (charged beyond a prepaid balance; uncollected)"),
                    ("reversal_shortfall", "Refund/dispute shortfall (already spent; unrecovered)"),
                ],
                max_length=32,
            ),
        ),
        migrations.RunSQL(FORWARD, BACKWARD),
    ]
