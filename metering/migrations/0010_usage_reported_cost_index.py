from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("metering", "0009_usage_end_state_and_record_fields"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="usagerecord",
            index=models.Index(
                condition=models.Q(("reported_cost_micros__isnull", False)),
                fields=["created_at"],
                name="usage_reported_cost_time",
            ),
        ),
    ]
