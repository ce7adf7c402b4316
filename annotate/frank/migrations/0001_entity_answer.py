"""FRANK's reading-check answer moves from the shared assignment into the FRANK app: the table is created, every
stored outcome copied with the choice its layout kept, and the choice taken out of the layout (which says what
the page showed, not what the worker answered). Runs before the shared app drops its column."""
import django.db.models.deletion
from django.db import migrations, models


def copy_answers(apps, schema_editor):
    assignments = apps.get_model("annotate", "Assignment")._meta.db_table
    answers = apps.get_model("frank", "EntityAnswer")._meta.db_table
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"""
            INSERT INTO {answers} (assignment_id, choice, correct)
            SELECT id, CASE WHEN jsonb_typeof(layout -> 'entity_choice') = 'number' THEN (layout ->> 'entity_choice')::smallint END,
                   entity_correct
            FROM {assignments} WHERE entity_correct IS NOT NULL""")
        cursor.execute(f"UPDATE {assignments} SET layout = layout - 'entity_choice' WHERE layout -> 'entity_choice' IS NOT NULL")


def restore_answers(apps, schema_editor):
    assignments = apps.get_model("annotate", "Assignment")._meta.db_table
    answers = apps.get_model("frank", "EntityAnswer")._meta.db_table
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"""
            UPDATE {assignments} a SET entity_correct = e.correct,
                   layout = CASE WHEN e.choice IS NULL THEN a.layout ELSE a.layout || jsonb_build_object('entity_choice', e.choice) END
            FROM {answers} e WHERE e.assignment_id = a.id""")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("annotate", "0012_edit_moves_to_bump"),
    ]

    run_before = [
        ("annotate", "0013_protocol_columns_leave_assignment"),
    ]

    operations = [
        migrations.CreateModel(
            name="EntityAnswer",
            fields=[
                ("assignment", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name="entity_answer", serialize=False, to="annotate.assignment")),
                ("choice", models.PositiveSmallIntegerField(blank=True, null=True)),
                ("correct", models.BooleanField()),
            ],
        ),
        migrations.RunPython(copy_answers, restore_answers),
    ]
