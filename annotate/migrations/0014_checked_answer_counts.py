"""Per-participation counts of checked answers, kept by each submission (annotate.services.check_counts), and
the campaign's checks version that every change of gold or traps raises. Rows are built from each worker's
history the first time they are read, so none is made here."""
import django.db.models.deletion
from django.db import migrations, models

import annotate.models.checks


class Migration(migrations.Migration):

    dependencies = [
        ("annotate", "0013_protocol_columns_leave_assignment"),
    ]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="checks_version",
            field=models.PositiveIntegerField(default=0, editable=False),
        ),
        migrations.CreateModel(
            name="CheckedAnswerCounts",
            fields=[
                ("participation", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name="checked_counts", serialize=False, to="annotate.participation")),
                ("checks_version", models.PositiveIntegerField()),
                ("items_counted", models.PositiveIntegerField()),
                ("cells", models.JSONField(default=list)),
                ("recent", models.JSONField(default=list)),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
            options={
                "constraints": [
                    models.CheckConstraint(condition=annotate.models.checks.is_json_array("cells"), name="checked_counts_cells_array"),
                    models.CheckConstraint(condition=annotate.models.checks.is_json_array("recent"), name="checked_counts_recent_array"),
                    models.CheckConstraint(condition=models.Q(("checks_version__gte", 0), ("items_counted__gte", 0)), name="checked_counts_non_negative"),
                ],
            },
        ),
    ]
