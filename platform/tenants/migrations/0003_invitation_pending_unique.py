from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tenants", "0002_invitation_revoke_duplicates"),
    ]

    operations = [
        migrations.AddConstraint(
            model_name="invitation",
            constraint=models.UniqueConstraint(
                condition=models.Q(("accepted_at__isnull", True), ("revoked_at__isnull", True)),
                fields=("tenant", "email"),
                name="uniq_pending_invitation",
            ),
        ),
    ]
