"""The checkpoint code of a BUMP assignment moves from the shared assignment into the BUMP app: the table is
created and every stored code copied (runs before the shared app drops its column)."""
import django.db.models.deletion
from django.db import migrations, models


def copy_codes(apps, schema_editor):
    assignments = apps.get_model("annotate", "Assignment")._meta.db_table
    checkpoints = apps.get_model("bump", "Checkpoint")._meta.db_table
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {checkpoints} (assignment_id, code) SELECT id, checkpoint_code FROM {assignments} WHERE checkpoint_code <> ''"
        )


def restore_codes(apps, schema_editor):
    assignments = apps.get_model("annotate", "Assignment")._meta.db_table
    checkpoints = apps.get_model("bump", "Checkpoint")._meta.db_table
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"UPDATE {assignments} a SET checkpoint_code = c.code FROM {checkpoints} c WHERE c.assignment_id = a.id")


class Migration(migrations.Migration):

    dependencies = [
        ("annotate", "0012_edit_moves_to_bump"),
        ("bump", "0001_edit"),
    ]

    run_before = [
        ("annotate", "0013_protocol_columns_leave_assignment"),
    ]

    operations = [
        migrations.CreateModel(
            name="Checkpoint",
            fields=[
                ("assignment", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name="checkpoint", serialize=False, to="annotate.assignment")),
                ("code", models.CharField(max_length=16)),
            ],
            options={
                "constraints": [models.CheckConstraint(condition=~models.Q(code=""), name="bump_checkpoint_code_not_empty")],
            },
        ),
        migrations.RunPython(copy_codes, restore_codes),
    ]
