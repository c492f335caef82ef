from django.db import migrations, models
from django.db.models.functions import Now


def revoke_older_duplicates(apps, schema_editor):
    """Before 0003's constraint: of several pending invitations of one address, keep the newest."""
    Invitation = apps.get_model("tenants", "Invitation")
    pending = Invitation.objects.filter(accepted_at__isnull=True, revoked_at__isnull=True)
    groups = pending.values("tenant_id", "email").annotate(newest=models.Max("id"), n=models.Count("id"))
    for group in groups.filter(n__gt=1):
        older = pending.filter(tenant_id=group["tenant_id"], email=group["email"]).exclude(id=group["newest"])
        older.update(revoked_at=Now())


class Migration(migrations.Migration):
    dependencies = [
        ("tenants", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(revoke_older_duplicates, migrations.RunPython.noop),
    ]
