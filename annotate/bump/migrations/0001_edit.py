"""BUMP's Edit model joins the BUMP app: only Django's record of the model moves; the table ``annotate_edit``,
its rows, keys and indexes stay as they are."""
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("annotate", "0011_campaign_reviewers"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Edit",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("requested_error_type", models.CharField(blank=True, help_text="Empty for free-style edits.", max_length=30)),
                        ("is_not_applicable", models.BooleanField(default=False, help_text="The worker said the type cannot be introduced (N/A).")),
                        ("text", models.TextField(blank=True)),
                        ("word_distance", models.PositiveIntegerField(default=0)),
                        ("inserted_words", models.JSONField(blank=True, default=list)),
                        ("hint_inserted_in_article", models.BooleanField(blank=True, null=True)),
                        ("hint_likely_kind", models.CharField(blank=True, help_text="'intrinsic' or 'extrinsic'.", max_length=10)),
                        ("hint_disagrees", models.BooleanField(default=False)),
                        ("review_status", models.CharField(choices=[("pending", "Awaiting review"), ("accepted", "Accepted"), ("corrected", "Type corrected"), ("rejected", "Rejected")], default="pending", max_length=10)),
                        ("corrected_error_type", models.CharField(blank=True, max_length=30)),
                        ("review_comment", models.TextField(blank=True)),
                        ("reviewed_at", models.DateTimeField(blank=True, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("assignment", models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name="edit", to="annotate.assignment")),
                        ("edited_summary", models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="edit_record", to="annotate.summary")),
                        ("reviewer", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to=settings.AUTH_USER_MODEL)),
                        ("source_summary", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="received_edits", to="annotate.summary")),
                        ("worker", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="edits", to="annotate.worker")),
                    ],
                    options={"db_table": "annotate_edit"},
                ),
            ],
            database_operations=[],
        ),
    ]
