"""FRANK's reading-check answer moves from the shared assignment into the FRANK app: the table is created, every
stored outcome copied with the choice its layout kept, and the choice taken out of the layout (which says what
the page showed, not what the worker answered). Runs before the shared app drops its column."""
import django.db.models.deletion
from django.db import migrations, models


BATCH = 2000


def _choice(layout) -> int | None:
    choice = layout.get("entity_choice") if isinstance(layout, dict) else None
    return choice if isinstance(choice, int) and not isinstance(choice, bool) and choice >= 0 else None


# Through the ORM, not SQL: the same migration runs on PostgreSQL and on the demo's SQLite.
def copy_answers(apps, schema_editor):
    Assignment = apps.get_model("annotate", "Assignment")
    EntityAnswer = apps.get_model("frank", "EntityAnswer")
    db = schema_editor.connection.alias
    answered = list(Assignment.objects.using(db).filter(entity_correct__isnull=False).values_list("pk", "layout", "entity_correct"))
    EntityAnswer.objects.using(db).bulk_create(
        [EntityAnswer(assignment_id=pk, choice=_choice(layout), correct=correct) for pk, layout, correct in answered], batch_size=BATCH)
    with_choice = [a for a in Assignment.objects.using(db).only("pk", "layout").iterator(chunk_size=BATCH) if isinstance(a.layout, dict) and "entity_choice" in a.layout]
    for assignment in with_choice:
        del assignment.layout["entity_choice"]
    Assignment.objects.using(db).bulk_update(with_choice, ["layout"], batch_size=BATCH)


def restore_answers(apps, schema_editor):
    Assignment = apps.get_model("annotate", "Assignment")
    EntityAnswer = apps.get_model("frank", "EntityAnswer")
    db = schema_editor.connection.alias
    answers = dict(EntityAnswer.objects.using(db).values_list("assignment_id", "correct"))
    choices = dict(EntityAnswer.objects.using(db).filter(choice__isnull=False).values_list("assignment_id", "choice"))
    assignments = list(Assignment.objects.using(db).filter(pk__in=list(answers)).only("pk", "layout", "entity_correct"))
    for assignment in assignments:
        assignment.entity_correct = answers[assignment.pk]
        if assignment.pk in choices:
            assignment.layout = {**(assignment.layout or {}), "entity_choice": choices[assignment.pk]}
    Assignment.objects.using(db).bulk_update(assignments, ["entity_correct", "layout"], batch_size=BATCH)


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
