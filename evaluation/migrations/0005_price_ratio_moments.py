"""The price-truth ratios are rolled up as moments (``ocf.k``/``.s``/``.ss``, ``bil.*``) instead of histograms:
forget the one-time backfill so the next statistics refresh rebuilds the rollups of the raw rows still kept
(8 days) with the new counters (``evaluation.services.rollup.rollups_backfill``)."""

from django.db import migrations


def rebuild_rollups_on_next_refresh(apps, schema_editor):
    apps.get_model("evaluation", "RollupBackfill").objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0004_answer_ttft"),
    ]

    operations = [
        migrations.RunPython(rebuild_rollups_on_next_refresh, migrations.RunPython.noop),
    ]
