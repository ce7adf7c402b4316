"""The checkpoint code of a BUMP assignment moves from the shared assignment into the BUMP app: the table is
created and every stored code copied (runs before the shared app drops its column)."""
import django.db.models.deletion
from django.db import migrations, models


BATCH = 2000


# Through the ORM, not SQL: the same migration runs on PostgreSQL and on the demo's SQLite.
def copy_codes(apps, schema_editor):
    Assignment = apps.get_model("annotate", "Assignment")
    Checkpoint = apps.get_model("bump", "Checkpoint")
    db = schema_editor.connection.alias
    codes = Assignment.objects.using(db).exclude(checkpoint_code="").values_list("pk", "checkpoint_code")
    Checkpoint.objects.using(db).bulk_create([Checkpoint(assignment_id=pk, code=code) for pk, code in codes], batch_size=BATCH)


def restore_codes(apps, schema_editor):
    Assignment = apps.get_model("annotate", "Assignment")
    Checkpoint = apps.get_model("bump", "Checkpoint")
    db = schema_editor.connection.alias
    codes = dict(Checkpoint.objects.using(db).values_list("assignment_id", "code"))
    assignments = list(Assignment.objects.using(db).filter(pk__in=list(codes)).only("pk", "checkpoint_code"))
    for assignment in assignments:
        assignment.checkpoint_code = codes[assignment.pk]
    Assignment.objects.using(db).bulk_update(assignments, ["checkpoint_code"], batch_size=BATCH)


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
