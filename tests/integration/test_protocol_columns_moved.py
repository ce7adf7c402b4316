"""BUMP's checkpoint code and FRANK's reading-check answer moved from the shared assignment into their protocol
apps: values stored in the old columns are the protocol apps' rows after the migrations, the answer's choice
leaves the layout (what the page showed), and migrating back restores the columns as they were."""
from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("annotate", "0012_edit_moves_to_bump"), ("bump", "0001_edit"), ("frank", None)]
AFTER = [("annotate", "0013_protocol_columns_leave_assignment"), ("bump", "0002_checkpoint"), ("frank", "0001_entity_answer")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return MigrationExecutor(connection).loader.project_state([t for t in targets if t[1]]).apps


@pytest.mark.django_db(transaction=True)
def test_stored_codes_and_reading_check_answers_move_into_their_apps_and_back():
    try:
        old = _migrate(BEFORE)
        model = old.get_model
        campaign = model("annotate", "Campaign").objects.create(slug="moved", name="Moved", kind="frank")
        document = model("annotate", "Document").objects.create(campaign=campaign, external_id="1", text="An article.")
        item = model("annotate", "Item").objects.create(campaign=campaign, document=document)
        users = [model("auth", "User").objects.create(username=f"moved-{n}") for n in range(4)]
        workers = [model("annotate", "Worker").objects.create(user=user) for user in users]
        Assignment = model("annotate", "Assignment")
        expires = "2030-01-01T00:00:00Z"
        bump = Assignment.objects.create(item=item, worker=workers[0], expires_at=expires, checkpoint_code="K7PQ2M", layout={"checkpoint": True})
        wrong = Assignment.objects.create(item=item, worker=workers[1], expires_at=expires, entity_correct=False,
                                          layout={"entity": {"options": ["a", "b", "c"]}, "entity_choice": 2})
        unkept = Assignment.objects.create(item=item, worker=workers[2], expires_at=expires, entity_correct=True, layout={"entity": {}})
        unanswered = Assignment.objects.create(item=item, worker=workers[3], expires_at=expires, layout={"entity": {}})

        new = _migrate(AFTER)
        assert {f.name for f in new.get_model("annotate", "Assignment")._meta.get_fields()}.isdisjoint({"checkpoint_code", "entity_correct"})
        assert list(new.get_model("bump", "Checkpoint").objects.values_list("assignment_id", "code")) == [(bump.pk, "K7PQ2M")]
        answers = new.get_model("frank", "EntityAnswer").objects.order_by("assignment_id").values_list("assignment_id", "choice", "correct")
        assert list(answers) == [(wrong.pk, 2, False), (unkept.pk, None, True)]  # none for the unanswered check
        layouts = dict(new.get_model("annotate", "Assignment").objects.values_list("pk", "layout"))
        assert layouts[wrong.pk] == {"entity": {"options": ["a", "b", "c"]}} and layouts[unanswered.pk] == {"entity": {}}

        back = _migrate(BEFORE)
        restored = {a.pk: a for a in back.get_model("annotate", "Assignment").objects.all()}
        assert restored[bump.pk].checkpoint_code == "K7PQ2M" and restored[wrong.pk].layout["entity_choice"] == 2
        assert [restored[a.pk].entity_correct for a in (wrong, unkept, unanswered)] == [False, True, None]
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())  # the schema every later test expects
